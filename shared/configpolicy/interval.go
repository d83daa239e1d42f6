package configpolicy

import (
	"fmt"
	"strings"
	"time"
)

// ParseInterval reads an evaluationInterval value: a Go duration ("10s",
// "1m30s") or "never". Empty means unset: ok is false and the caller's default
// applies. A negative or malformed value is a *FieldError for field.
func ParseInterval(value, field string) (interval time.Duration, never, ok bool, err error) {
	switch v := strings.TrimSpace(value); v {
	case "":
		return 0, false, false, nil
	case "never":
		return 0, true, true, nil
	default:
		d, perr := time.ParseDuration(v)
		if perr != nil || d < 0 {
			return 0, false, false, &FieldError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 10s or 1m30s, nor never", value)}
		}
		return d, false, true, nil
	}
}
