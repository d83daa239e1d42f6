module github.com/fleetpolicy/fleetpolicy/functions

go 1.25.0
