module github.com/fleetpolicy/fleetpolicy/controllers

go 1.25.0
