package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console/view"
)

// Identity modes: whose identity the console reads with.
const (
	// IdentityKubeconfig reads with the identity of the console's own
	// kubeconfig: one person's console on a workstation.
	IdentityKubeconfig = "kubeconfig"
	// IdentityToken reads with each viewer's bearer token (an Authorization
	// header, as an authenticating proxy sends it, or the token the viewer
	// gave on /login, kept in an HttpOnly cookie); the console's own
	// credentials are never used.
	IdentityToken = "token"
)

// tokenCookie holds a token given on /login.
const tokenCookie = "fleetpolicy-console-token"

// fragmentHeader asks for a page's <main> only: the live script swaps it in.
const fragmentHeader = "X-Console-Fragment"

// Options configure the console.
type Options struct {
	// Config reaches the hub's API server. With IdentityToken only its
	// address and CA are used.
	Config   *rest.Config
	Scheme   *runtime.Scheme
	Identity string
	// PageSize is a table's default rows per page, MaxPageSize the most a
	// request may ask for.
	PageSize, MaxPageSize int
	// MaxViewers identities keep caches, each for at most MaxScopes namespace
	// scopes, dropped after ViewerIdle unused; a viewer's right to list is
	// confirmed again when older than Recheck.
	MaxViewers, MaxScopes int
	ViewerIdle, Recheck   time.Duration
	// MaxInFlight requests are served at once (429 beyond), each within
	// RequestTimeout; MaxReads bounds the objects one direct list reads.
	MaxInFlight    int
	RequestTimeout time.Duration
	MaxReads       int64
	// Refresh is how often the live script asks for the page again.
	Refresh time.Duration
	// SecureCookie marks the login cookie Secure (serving behind TLS).
	SecureCookie bool
	Now          func() time.Time
}

// DefaultOptions are the console's defaults.
func DefaultOptions() Options {
	return Options{Identity: IdentityKubeconfig, PageSize: 100, MaxPageSize: 500, MaxViewers: 32, MaxScopes: 8,
		ViewerIdle: 10 * time.Minute, Recheck: 30 * time.Second, MaxInFlight: 16, RequestTimeout: 20 * time.Second,
		MaxReads: 500, Refresh: 3 * time.Second, Now: time.Now}
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Server is the console: an http.Handler with no endpoint that writes to the
// API server.
type Server struct {
	o       Options
	viewers *viewers
	pages   map[string]*template.Template
	slots   chan struct{}
	// explainSlot lets one placement explanation run at once.
	explainSlot chan struct{}
	// routes are the console's routes behind the cross-origin check.
	routes http.Handler
}

// New builds the console.
func New(o Options) (*Server, error) {
	if o.Config == nil || o.Scheme == nil {
		return nil, errors.New("console: Config and Scheme are required")
	}
	if o.Identity != IdentityKubeconfig && o.Identity != IdentityToken {
		return nil, fmt.Errorf("console: identity %q is neither %s nor %s", o.Identity, IdentityKubeconfig, IdentityToken)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, pages: pages, slots: make(chan struct{}, max(o.MaxInFlight, 1)), explainSlot: make(chan struct{}, 1),
		viewers: &viewers{base: o.Config, scheme: o.Scheme, max: max(o.MaxViewers, 1), scopes: max(o.MaxScopes, 1),
			idle: o.ViewerIdle, recheck: o.Recheck, syncWait: o.RequestTimeout, now: o.Now, entries: map[string]*viewer{}}}
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /login", s.loginForm)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.Handle("GET /{$}", s.page(s.fleet))
	mux.Handle("GET /policies/{namespace}/{name}", s.page(s.policy))
	mux.Handle("GET /policies/{namespace}/{name}/clusters/{cluster}", s.page(s.replica))
	mux.Handle("GET /policies/{namespace}/{name}/rollout", s.page(s.rollout))
	mux.Handle("GET /policies/{namespace}/{name}/placement", s.page(s.placement))
	mux.Handle("GET /clusters/{name}", s.page(s.cluster))
	// POST /login and /logout change which identity reads: another site must
	// not be able to sign a viewer in as someone else (login CSRF) or out. A
	// browser's unsafe request is refused (403) when its Sec-Fetch-Site, or
	// without it its Origin against Host, says it comes from another origin.
	s.routes = http.NewCrossOriginProtection().Handler(mux)
	return s, nil
}

// Run drops idle viewers' caches until ctx ends, then stops them all.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.viewers.stopAll()
			return
		case <-t.C:
			s.viewers.sweep()
		}
	}
}

// ServeHTTP sets the security headers, refuses what the console does not
// serve and cross-origin POSTs, bounds the requests in flight and their time.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		h.Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("%d requests are being served already; retry later", cap(s.slots)), http.StatusTooManyRequests)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
	defer cancel()
	s.routes.ServeHTTP(w, r.WithContext(ctx))
}

// request is what a page handler reads and answers.
type request struct {
	*http.Request
	viewer *viewer
	now    time.Time
}

// pageResult is what a page handler returns: the template and its data,
// or the tables it can export.
type pageResult struct {
	Template string
	Title    string
	Data     any
	Tables   map[string]view.Table
}

// errorPage is the data of the error template.
type errorPage struct {
	Status  int
	Message string
}

type pageHandler func(r *request) (pageResult, error)

// layout is what every page's layout reads.
type layout struct {
	Title     string
	Refresh   int
	Token     bool
	Data      any
	Exports   []string
	ExportURL func(table, format string) string
}

func (s *Server) page(h pageHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := s.identity(r)
		if !ok {
			if r.Header.Get(fragmentHeader) != "" {
				http.Error(w, "not signed in", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		v, err := s.viewers.viewer(id)
		if err != nil {
			s.render(w, r, http.StatusBadGateway, pageResult{Template: "error", Title: "error", Data: errorPage{http.StatusBadGateway, err.Error()}})
			return
		}
		res, err := h(&request{Request: r, viewer: v, now: s.o.Now()})
		if err != nil {
			status := http.StatusBadGateway
			var st apierrors.APIStatus
			switch {
			case errors.As(err, &st) && st.Status().Code != 0:
				status = int(st.Status().Code)
			case errors.Is(err, context.DeadlineExceeded):
				status = http.StatusGatewayTimeout
			}
			s.render(w, r, status, pageResult{Template: "error", Title: "error", Data: errorPage{status, err.Error()}})
			return
		}
		if format := r.URL.Query().Get("export"); format != "" {
			s.export(w, r, res, format)
			return
		}
		s.render(w, r, http.StatusOK, res)
	})
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, res pageResult) {
	t := s.pages[res.Template]
	name := "layout"
	if r.Header.Get(fragmentHeader) != "" {
		name = "main"
	}
	l := layout{Title: res.Title, Refresh: int(s.o.Refresh / time.Millisecond),
		Token: s.o.Identity == IdentityToken, Data: res.Data, Exports: slices.Sorted(maps.Keys(res.Tables)),
		ExportURL: func(table, format string) string {
			q := r.URL.Query()
			q.Set("export", format)
			q.Set("table", table)
			return r.URL.Path + "?" + q.Encode()
		}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := t.ExecuteTemplate(w, name, l); err != nil {
		_, _ = fmt.Fprintf(w, "<p>rendering failed: %s</p>", template.HTMLEscapeString(err.Error()))
	}
}

func (s *Server) export(w http.ResponseWriter, r *http.Request, res pageResult, format string) {
	name := r.URL.Query().Get("table")
	t, ok := res.Tables[name]
	if !ok {
		http.Error(w, fmt.Sprintf("no table %q on this page", name), http.StatusNotFound)
		return
	}
	file := strings.Trim(strings.ReplaceAll(r.URL.Path, "/", "-"), "-")
	if file == "" {
		file = "fleet"
	}
	file += "-" + name
	switch format {
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.csv"`)
		_ = t.WriteCSV(w)
	case "json":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.json"`)
		_ = t.WriteJSON(w)
	default:
		http.Error(w, "export is csv or json", http.StatusBadRequest)
	}
}

// identity is whose identity r reads with; false when a token is needed and
// r has none.
func (s *Server) identity(r *http.Request) (identity, bool) {
	if s.o.Identity == IdentityKubeconfig {
		return identity{key: IdentityKubeconfig, cfg: s.o.Config}, true
	}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		if token := strings.TrimSpace(strings.TrimPrefix(auth, "Bearer ")); token != "" {
			return tokenIdentity(s.o.Config, token), true
		}
	}
	if c, err := r.Cookie(tokenCookie); err == nil && c.Value != "" {
		return tokenIdentity(s.o.Config, c.Value), true
	}
	return identity{}, false
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, pageResult{Template: "login", Title: "sign in",
		Data: loginPage{Identity: s.o.Identity, Next: localPath(r.URL.Query().Get("next"))}})
}

// login keeps the token the viewer gave in an HttpOnly, SameSite=Strict
// cookie; it writes nothing to the API server.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.o.Identity != IdentityToken {
		http.Error(w, "this console reads with its kubeconfig's identity; there is nothing to sign in to", http.StatusNotFound)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if token == "" {
		http.Error(w, "a bearer token is needed", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true, Secure: s.o.SecureCookie,
		SameSite: http.SameSiteStrictMode, MaxAge: int((8 * time.Hour).Seconds())})
	http.Redirect(w, r, localPath(r.PostForm.Get("next")), http.StatusSeeOther)
}

type loginPage struct {
	Identity, Next string
}

// localPath is next when it is a path of this console, "/" otherwise: a
// sign-in never redirects elsewhere.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return next
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.o.SecureCookie,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// intParam is a positive integer query parameter, or def.
func intParam(r *http.Request, name string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && n > 0 {
		return n
	}
	return def
}
