package hub

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The answers of the API server an authenticated and authorized filter keeps,
// as controller-runtime's filter (metrics/filters) keeps them: a token's
// review for a minute, an allowed access for five and a denied one for 30 s.
const (
	tokenReviewTTL = time.Minute
	accessAllowTTL = 5 * time.Minute
	accessDenyTTL  = 30 * time.Second
	maxKeptAnswers = 1024
	// apiServerBudget bounds each review, as controller-runtime's filter does.
	apiServerBudget = 10 * time.Second
)

// withAuthenticationAndAuthorization is a filter for the hub's HTTPS
// endpoints (metrics, /explain) that lets a request through only when the
// API server says who sent it (a TokenReview of its bearer token; 401
// without a token it accepts) and that they may use the request's verb on
// its path (a SubjectAccessReview of the non-resource URL; 403 otherwise); an
// API server that does not answer gives 500. It keeps the API server's
// answers as long as controller-runtime's
// metrics/filters.WithAuthenticationAndAuthorization, which it replaces (that
// one answered 500, not 401, to a token the API server could not review, a
// malformed one among them): it links k8s.io/apiserver, with OpenTelemetry,
// gRPC and component-base, which took 21 MiB of resident binary pages and
// 8 MiB of heap from every hub process, used or not.
func withAuthenticationAndAuthorization(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	reviews := &keptAnswers[authenticationv1.TokenReviewStatus]{}
	accesses := &keptAnswers[bool]{}
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			// The reviews' time, not the handler's.
			ctx, cancel := context.WithTimeout(req.Context(), apiServerBudget)
			defer cancel()
			token, ok := bearerToken(req)
			if !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			tokenKey := fmt.Sprintf("%x", sha256.Sum256([]byte(token)))
			review, kept := reviews.get(tokenKey)
			if !kept {
				answer, err := authn.TokenReviews().Create(ctx, &authenticationv1.TokenReview{
					Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
				if err != nil {
					log.Error(err, "Authentication failed")
					http.Error(w, "Authentication failed", http.StatusInternalServerError)
					return
				}
				review = answer.Status
				reviews.put(tokenKey, review, tokenReviewTTL)
			}
			if !review.Authenticated {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			user := review.User
			verb := strings.ToLower(req.Method)
			accessKey := strings.Join(append([]string{user.Username, user.UID, verb, req.URL.Path}, slices.Sorted(slices.Values(user.Groups))...), "\x00")
			allowed, kept := accesses.get(accessKey)
			if !kept {
				extra := map[string]authorizationv1.ExtraValue{}
				for k, v := range user.Extra {
					extra[k] = authorizationv1.ExtraValue(v)
				}
				answer, err := authz.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
					Spec: authorizationv1.SubjectAccessReviewSpec{
						User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
						NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: req.URL.Path, Verb: verb},
					}}, metav1.CreateOptions{})
				if err != nil {
					msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
					log.Error(err, msg)
					http.Error(w, msg, http.StatusInternalServerError)
					return
				}
				allowed = answer.Status.Allowed && !answer.Status.Denied
				ttl := accessDenyTTL
				if allowed {
					ttl = accessAllowTTL
				}
				accesses.put(accessKey, allowed, ttl)
			}
			if !allowed {
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", user.Username), http.StatusForbidden)
				return
			}
			handler.ServeHTTP(w, req)
		}), nil
	}, nil
}

// bearerToken is the request's "Authorization: Bearer <token>".
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

// keptAnswers are answers of the API server kept until they expire, at most
// maxKeptAnswers of them (past it, every kept answer is dropped).
type keptAnswers[T any] struct {
	mu      sync.Mutex
	answers map[string]keptAnswer[T]
}

type keptAnswer[T any] struct {
	value   T
	expires time.Time
}

func (k *keptAnswers[T]) get(key string) (T, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	a, ok := k.answers[key]
	if !ok || time.Now().After(a.expires) {
		var zero T
		return zero, false
	}
	return a.value, true
}

func (k *keptAnswers[T]) put(key string, value T, ttl time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.answers == nil || len(k.answers) >= maxKeptAnswers {
		k.answers = map[string]keptAnswer[T]{}
	}
	k.answers[key] = keptAnswer[T]{value: value, expires: time.Now().Add(ttl)}
}
