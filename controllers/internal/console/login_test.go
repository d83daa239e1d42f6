package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// TestLoginRefusesOtherOrigins signs in with a form POST as the console's own
// sign-in page sends it, and refuses the same POST sent by a page of another
// origin (login CSRF: another site signing the viewer in as someone else, or
// out). Signing in reaches no API server: the token is only kept in a cookie.
func TestLoginRefusesOtherOrigins(t *testing.T) {
	o := console.DefaultOptions()
	o.Identity = console.IdentityToken
	o.Config, o.Scheme = &rest.Config{Host: "https://127.0.0.1:1"}, scheme.New()
	srv, err := console.New(o)
	if err != nil {
		t.Fatal(err)
	}
	const host = "console.example:8090"
	cases := []struct {
		name    string
		path    string
		headers map[string]string
		refused bool
	}{
		{name: "from the console's own page", path: "/login",
			headers: map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}},
		{name: "same origin by Origin alone (no Sec-Fetch-Site)", path: "/login",
			headers: map[string]string{"Origin": "http://" + host}},
		{name: "not from a browser (no Origin, no Sec-Fetch-Site)", path: "/login"},
		{name: "typed into the address bar", path: "/login", headers: map[string]string{"Sec-Fetch-Site": "none"}},
		{name: "from another site", path: "/login", refused: true,
			headers: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{name: "from another site by Origin alone", path: "/login", refused: true,
			headers: map[string]string{"Origin": "https://evil.example"}},
		{name: "from another site by Sec-Fetch-Site alone", path: "/login", refused: true,
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{name: "from a sibling subdomain", path: "/login", refused: true,
			headers: map[string]string{"Origin": "https://other.console.example", "Sec-Fetch-Site": "same-site"}},
		{name: "signing out from another site", path: "/logout", refused: true,
			headers: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"token": {"the-viewers-token"}, "next": {"/?namespace=team-a"}}
			req := httptest.NewRequest(http.MethodPost, "http://"+host+tc.path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			cookies := rec.Result().Cookies()
			if tc.refused {
				if rec.Code != http.StatusForbidden {
					t.Errorf("status %d, want 403", rec.Code)
				}
				if len(cookies) != 0 {
					t.Errorf("a refused request set cookies %v", cookies)
				}
				return
			}
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("status %d, want 303: %s", rec.Code, rec.Body)
			}
			if loc := rec.Header().Get("Location"); loc != "/?namespace=team-a" {
				t.Errorf("redirected to %q, want the page asked for", loc)
			}
			if len(cookies) != 1 || cookies[0].Value != "the-viewers-token" || !cookies[0].HttpOnly || cookies[0].Secure {
				t.Errorf("cookies %v, want the token in one HttpOnly cookie, not Secure without TLS", cookies)
			}
		})
	}
}
