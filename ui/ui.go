// Package ui is the operator page that `baton serve` mounts at /ui/: the auth profiles with
// their cooldowns counting down, the sessions on a fallback, the recent replies from visibility,
// and each reply's failover timeline as a picture. It is server-rendered (html/template, inline
// SVG); a few lines of plain JavaScript refresh it and count the cooldowns down.
package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/batonhq/baton/history"
	"github.com/batonhq/baton/internal/codec"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Options are what the page reads.
type Options struct {
	// Client reads visibility, histories and running replies' status.
	Client client.Client
	// Namespace is the client's namespace (for the Web UI's links).
	Namespace string
	// Store holds the profiles' usage stats and the sessions.
	Store *store.Store
	// Config is the current config (auth order, cooldown settings); nil or returning nil: defaults.
	Config func() *policy.Config
	// WebUIURL is the Temporal Web UI's base URL (http://127.0.0.1:8233), for links; empty: none.
	WebUIURL string
	// DataConverter reads history payloads. Nil: the default converter, with BATON_PAYLOAD_KEY's
	// codec when that is set (as the CLI's client has it).
	DataConverter converter.DataConverter
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Prefix is where the page lives; the handler is given full paths.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))

type handler struct {
	o      Options
	dc     converter.DataConverter
	dcErr  error
	config func() *policy.Config
}

// New returns the page's handler, serving GET /ui/ (the board: profiles, sessions on a fallback,
// recent replies), /ui/reply?id=WORKFLOW_ID[&run=RUN_ID] (a reply's timeline) and
// /ui/reply.svg?id=…[&run=…] (the same picture as a file).
func New(o Options) http.Handler {
	h := &handler{o: o, dc: o.DataConverter}
	if h.dc == nil {
		// The same keys as the worker's (BATON_PAYLOAD_KEY, and BATON_PAYLOAD_KEYS after a rotation).
		conv, err := codec.ConvertersFromEnv(os.LookupEnv)
		h.dc, h.dcErr = conv.Data, err
		if err != nil {
			h.dcErr = fmt.Errorf("%s: %w", codec.EnvKey, err)
		}
	}
	if h.o.Now == nil {
		h.o.Now = time.Now
	}
	h.config = func() *policy.Config {
		if o.Config != nil {
			if c := o.Config(); c != nil {
				return c
			}
		}
		return policy.DefaultConfig()
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the operator page is read-only: GET only", http.StatusMethodNotAllowed)
		return
	}
	switch strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/")) {
	case "/", "":
		h.board(w, r)
	case "/reply":
		h.reply(w, r)
	case "/reply.svg":
		h.replySVG(w, r)
	default:
		http.NotFound(w, r)
	}
}

// render writes a page with the headers every page carries: no caching, no framing, scripts only
// with this response's nonce.
func (h *handler) render(w http.ResponseWriter, status int, name string, data pageData) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	data.Nonce = base64.StdEncoding.EncodeToString(nonce)
	data.Generated = h.o.Now().UTC()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; script-src 'nonce-"+data.Nonce+"'")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		fmt.Fprintf(w, "<p>rendering the page failed: %s</p>", template.HTMLEscapeString(err.Error()))
	}
}

// pageData is what the layout needs, with the page's own data in Page.
type pageData struct {
	Title     string
	Nonce     string
	Generated time.Time
	Refresh   int // seconds between refreshes; 0: none
	Page      any
}

// webUILink is the Temporal Web UI's page of a workflow run, or "".
func (h *handler) webUILink(id, run string) string {
	base := strings.TrimRight(h.o.WebUIURL, "/")
	if base == "" || id == "" {
		return ""
	}
	ns := h.o.Namespace
	if ns == "" {
		ns = "default"
	}
	link := base + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(id)
	if run != "" {
		link += "/" + url.PathEscape(run)
	}
	return link + "/history"
}

// replyLink is this page's URL for a reply.
func replyLink(id, run string) string {
	q := url.Values{"id": {id}}
	if run != "" {
		q.Set("run", run)
	}
	return Prefix + "reply?" + q.Encode()
}

// timeout bounds what one page asks of the server and the store.
const timeout = 15 * time.Second

func (h *handler) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), timeout)
}

// TokenCookie holds a key derived from the serve token in the browser once the token was typed
// into the page's form.
const TokenCookie = "baton_token"

// RequireToken guards the page with serve's token (BATON_SERVE_TOKEN; empty: no guard): a
// request passes with the token as a bearer token, or with the cookie that the page's sign-in
// form (POST /ui/login, the token typed in) sets, since a browser cannot send a bearer header on
// its own. Without either it gets the sign-in form, with status 401.
func RequireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	ok := func(got string) bool { return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 }
	// The cookie holds a value derived from the token, not the token.
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("baton ui cookie"))
	cookie := hex.EncodeToString(mac.Sum(nil))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Prefix+"login" && r.Method == http.MethodPost {
			if err := r.ParseForm(); err == nil && ok(r.PostForm.Get("token")) {
				http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: cookie, Path: Prefix, HttpOnly: true,
					SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				http.Redirect(w, r, Prefix, http.StatusSeeOther)
				return
			}
			loginPage(w, "that is not the token")
			return
		}
		if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(bearer) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(TokenCookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(cookie)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		loginPage(w, "")
	})
}

func loginPage(w http.ResponseWriter, problem string) {
	(&handler{o: Options{Now: time.Now}}).render(w, http.StatusUnauthorized, "login", pageData{Title: "sign in", Page: problem})
}

// errText is an error for the page, in one line.
func errText(err error) string {
	if err == nil {
		return ""
	}
	var msg string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		msg = "no answer within " + timeout.String() + ": " + err.Error()
	default:
		msg = err.Error()
	}
	return strings.Join(strings.Fields(msg), " ")
}

var funcs = template.FuncMap{
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("15:04:05")
	},
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"millis": func(t time.Time) string { return t.UTC().Format("15:04:05.000") },
	"short":  history.Short,
	"left": func(until, now time.Time) string {
		if d := until.Sub(now); d > 0 {
			return history.Short(d.Round(time.Second)) + " left"
		}
		return "expired"
	},
	"ago": func(t, now time.Time) string {
		if t.IsZero() {
			return "never"
		}
		d := now.Sub(t)
		if d < time.Second {
			return "just now"
		}
		return history.Short(d.Round(time.Second)) + " ago"
	},
	"after": func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return ""
		}
		return "+" + history.Short(to.Sub(from))
	},
	"tone":      history.Tone,
	"waitLabel": history.WaitLabel,
	"dash": func(s any) string {
		v := fmt.Sprint(s)
		if v == "" || v == "0" || v == "<nil>" {
			return "–"
		}
		return v
	},
	"add": func(a, b int) int { return a + b },
	// What replies spent, formatted as the CLI prints it (spend.go).
	"cost": FormatCost,
	"tokens": func(s *policy.Spend) string {
		if s == nil {
			return "–"
		}
		return FormatTokens(*s)
	},
	"svg": func(b []byte) template.HTML { return template.HTML(b) }, // RenderSVG escapes every text it draws
}
