package hubtoken

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// serviceAccountPrefix starts the user name of every ServiceAccount.
const serviceAccountPrefix = "system:serviceaccount:"

// retryAfter is how long a failed renewal waits before the next attempt.
const retryAfter = time.Minute

// Renewing returns a copy of cfg whose requests carry a token renewed by
// TokenRequest before it expires, each valid for lifetime, when cfg
// authenticates a ServiceAccount with a bearer token; otherwise cfg as it is
// and false. It asks the hub who cfg is (SelfSubjectReview).
func Renewing(ctx context.Context, cfg *rest.Config, lifetime time.Duration, log logr.Logger) (*rest.Config, bool, error) {
	token := cfg.BearerToken
	if cfg.BearerTokenFile != "" || token == "" {
		return cfg, false, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, false, err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("asking the hub who the spoke is: %w", err)
	}
	namespace, name, ok := serviceAccount(review.Status.UserInfo.Username)
	if !ok {
		return cfg, false, nil
	}
	source := &requester{
		base:      rest.AnonymousClientConfig(cfg),
		namespace: namespace,
		name:      name,
		lifetime:  lifetime,
		current:   token,
		now:       time.Now,
		log:       log.WithValues("serviceAccount", namespace+"/"+name),
	}
	renewing := rest.CopyConfig(cfg)
	renewing.BearerToken = ""
	cached := transport.NewCachedTokenSource(source)
	renewing.Wrap(transport.ResettableTokenSourceWrapTransport(cached))
	return renewing, true, nil
}

// serviceAccount splits system:serviceaccount:<namespace>:<name>.
func serviceAccount(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != ""
}

// requester is the token source: each Token asks the hub for a new token,
// authenticated with the last one it got.
type requester struct {
	base            *rest.Config
	namespace, name string
	lifetime        time.Duration
	now             func() time.Time
	log             logr.Logger

	mu      sync.Mutex
	current string
}

// Token returns a new token, its Expiry set to four fifths of its lifetime so
// that it is renewed well before it expires. When the hub refuses, it returns
// the token held, to be tried again after retryAfter.
func (r *requester) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cfg := rest.CopyConfig(r.base)
	cfg.BearerToken = r.current
	issued := r.now()
	token, expiry, err := r.request(cfg)
	if err != nil {
		r.log.Error(err, "renewing the hub token failed; the token held is used until it expires", "retryIn", retryAfter)
		return &oauth2.Token{AccessToken: r.current, Expiry: issued.Add(retryAfter)}, nil
	}
	r.current = token
	return &oauth2.Token{AccessToken: token, Expiry: issued.Add(expiry.Sub(issued) * 4 / 5)}, nil
}

func (r *requester) request(cfg *rest.Config) (string, time.Time, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seconds := int64(r.lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(r.namespace).CreateToken(ctx, r.name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", r.namespace, r.name, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}
