package main

import (
	"strings"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
)

func TestCheckFlags(t *testing.T) {
	cases := []struct {
		name      string
		configure func(*console.Options)
		bind      string
		cert, key string
		want      string // a part of the error; "" for none
	}{
		{name: "the defaults", bind: "127.0.0.1:8090"},
		{name: "IPv6 loopback", bind: "[::1]:8090"},
		{name: "localhost", bind: "localhost:0"},
		{name: "the kubeconfig's identity beyond loopback", bind: "0.0.0.0:8090", want: "is not loopback"},
		{name: "no host is every interface", bind: ":8090", want: "is not loopback"},
		{name: "a token console may listen anywhere", bind: "0.0.0.0:8090",
			configure: func(o *console.Options) { o.Identity = console.IdentityToken }},
		{name: "an unknown identity", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.Identity = "hub" }, want: "--identity must be"},
		{name: "no port", bind: "127.0.0.1", want: "--bind-address"},
		{name: "a certificate without its key", bind: "127.0.0.1:1", cert: "c.pem", want: "go together"},
		{name: "a page larger than the largest", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.PageSize = 1000 }, want: "--page-size"},
		{name: "no request at once", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.MaxInFlight = 0 }, want: "--max-in-flight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := console.DefaultOptions()
			if tc.configure != nil {
				tc.configure(&o)
			}
			err := checkFlags(o, tc.bind, tc.cert, tc.key)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
