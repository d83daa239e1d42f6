module github.com/fleetpolicy/fleetpolicy/hack/node/pause

go 1.25.0
