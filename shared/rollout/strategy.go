package rollout

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// DefaultStrategyPath is the field path strategy errors and notes name when the
// caller gives none: the rollout strategy of a Policy.
var DefaultStrategyPath = field.NewPath("spec", "rolloutStrategy")

// progressDeadlineNone is the progressDeadline that never times out.
const progressDeadlineNone = "None"

// progressDeadlineSyntax is the check OCM's rollout library applies before
// time.ParseDuration (a prefix check, kept identical so that a deadline this
// package accepts is one the library accepts).
var progressDeadlineSyntax = regexp.MustCompile(`^(([0-9])+[h|m|s])|None$`)

// Strategy is a rollout strategy that passed validation, with every default
// spelled out.
type Strategy struct {
	// Spec is the normalised strategy handed to OCM's rollout library: Type is set,
	// the block of that type is present with progressDeadline "None" when it was
	// empty, maxFailures and maxConcurrency given as digits are integers and
	// percentages are written without leading zeros. Blocks of other types are
	// dropped (ResolveStrategy rejects them when they hold a setting).
	Spec clusterv1alpha1.RolloutStrategy
	// MinSuccessTime is the soak time a succeeded cluster holds its place before
	// the rollout moves on. It is 0 for All, whose rollout has a single step.
	MinSuccessTime time.Duration
	// ProgressDeadline is how long a cluster may stay Progressing or Failed before
	// it is TimeOut; nil means None (never).
	ProgressDeadline *time.Duration
	// MaxFailures is the normalised maxFailures of Progressive and
	// ProgressivePerGroup (integer 0 when unset).
	MaxFailures intstr.IntOrString
	// MaxConcurrency is the normalised maxConcurrency of Progressive (integer 0,
	// meaning every non-mandatory cluster, when unset).
	MaxConcurrency intstr.IntOrString
	// MandatoryDecisionGroups are the groups rolled out first, one group at a time,
	// tolerating no failure.
	MandatoryDecisionGroups []clusterv1alpha1.MandatoryDecisionGroup

	// path is the field path of the strategy, for errors and notes about it.
	path *field.Path
}

// blockPath is the field path of the strategy's own block (all, progressive or
// progressivePerGroup).
func (s Strategy) blockPath() *field.Path {
	switch s.Spec.Type {
	case clusterv1alpha1.Progressive:
		return s.path.Child("progressive")
	case clusterv1alpha1.ProgressivePerGroup:
		return s.path.Child("progressivePerGroup")
	default:
		return s.path.Child("all")
	}
}

// ResolveStrategy validates a rollout strategy and fills its defaults. path is the
// strategy's field path (nil: DefaultStrategyPath); every error names the field
// under it. An empty type means All. The checks that need the fleet (decision
// groups, maxFailures against the number of clusters) are made by Step and
// PlanWaves.
func ResolveStrategy(in clusterv1alpha1.RolloutStrategy, path *field.Path) (Strategy, error) {
	if path == nil {
		path = DefaultStrategyPath
	}
	out := Strategy{path: path}
	var errs field.ErrorList

	typ := in.Type
	if typ == "" {
		typ = clusterv1alpha1.All
	}
	out.Spec.Type = typ

	// A block of another type is ignored by OCM's rollout library; one that holds a
	// setting is almost certainly a mistake (a missing or wrong type), so reject it.
	if typ != clusterv1alpha1.All && in.All != nil && !isDefaultConfig(in.All.RolloutConfig) {
		errs = append(errs, field.Forbidden(path.Child("all"), fmt.Sprintf("is ignored when type is %s", typ)))
	}
	if typ != clusterv1alpha1.Progressive && in.Progressive != nil && !isDefaultProgressive(in.Progressive) {
		errs = append(errs, field.Forbidden(path.Child("progressive"), fmt.Sprintf("is ignored when type is %s", typ)))
	}
	if typ != clusterv1alpha1.ProgressivePerGroup && in.ProgressivePerGroup != nil && !isDefaultPerGroup(in.ProgressivePerGroup) {
		errs = append(errs, field.Forbidden(path.Child("progressivePerGroup"), fmt.Sprintf("is ignored when type is %s", typ)))
	}

	switch typ {
	case clusterv1alpha1.All:
		block := in.All.DeepCopy()
		if block == nil {
			block = &clusterv1alpha1.RolloutAll{}
		}
		errs = append(errs, out.resolveConfig(&block.RolloutConfig, path.Child("all"))...)
		// OCM's rollout library ignores minSuccessTime and maxFailures for All.
		out.MinSuccessTime = 0
		out.MaxFailures = intstr.FromInt32(0)
		out.Spec.All = block
	case clusterv1alpha1.Progressive:
		block := in.Progressive.DeepCopy()
		if block == nil {
			block = &clusterv1alpha1.RolloutProgressive{}
		}
		blockPath := path.Child("progressive")
		errs = append(errs, out.resolveConfig(&block.RolloutConfig, blockPath)...)
		errs = append(errs, out.resolveMandatory(block.MandatoryDecisionGroups.MandatoryDecisionGroups, blockPath)...)
		concurrency, err := normaliseSize(block.MaxConcurrency, blockPath.Child("maxConcurrency"))
		if err == nil && concurrency.Type == intstr.String && concurrency.StrVal == "0%" {
			err = field.Invalid(blockPath.Child("maxConcurrency"), block.MaxConcurrency.String(),
				"must be more than 0%; leave it unset to roll out every non-mandatory cluster at once")
		}
		if err != nil {
			errs = append(errs, err)
		}
		block.MaxConcurrency = concurrency
		out.MaxConcurrency = concurrency
		out.Spec.Progressive = block
	case clusterv1alpha1.ProgressivePerGroup:
		block := in.ProgressivePerGroup.DeepCopy()
		if block == nil {
			block = &clusterv1alpha1.RolloutProgressivePerGroup{}
		}
		blockPath := path.Child("progressivePerGroup")
		errs = append(errs, out.resolveConfig(&block.RolloutConfig, blockPath)...)
		errs = append(errs, out.resolveMandatory(block.MandatoryDecisionGroups.MandatoryDecisionGroups, blockPath)...)
		out.Spec.ProgressivePerGroup = block
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), string(in.Type), []string{
			string(clusterv1alpha1.All), string(clusterv1alpha1.Progressive), string(clusterv1alpha1.ProgressivePerGroup),
		}))
	}
	if len(errs) > 0 {
		return Strategy{}, errs.ToAggregate()
	}
	return out, nil
}

// resolveConfig validates and normalises the settings every type shares, in place.
func (s *Strategy) resolveConfig(config *clusterv1alpha1.RolloutConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if config.MinSuccessTime.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("minSuccessTime"), config.MinSuccessTime.Duration.String(), "must not be negative"))
	}
	s.MinSuccessTime = config.MinSuccessTime.Duration

	deadline, err := parseProgressDeadline(config.ProgressDeadline)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("progressDeadline"), config.ProgressDeadline, err.Error()))
	}
	if config.ProgressDeadline == "" {
		config.ProgressDeadline = progressDeadlineNone
	}
	s.ProgressDeadline = deadline

	failures, ferr := normaliseSize(config.MaxFailures, path.Child("maxFailures"))
	if ferr != nil {
		errs = append(errs, ferr)
	}
	config.MaxFailures = failures
	s.MaxFailures = failures
	return errs
}

// resolveMandatory validates the mandatory decision groups.
func (s *Strategy) resolveMandatory(groups []clusterv1alpha1.MandatoryDecisionGroup, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range groups {
		if g.GroupName == "" && g.GroupIndex < 0 {
			errs = append(errs, field.Invalid(path.Child("mandatoryDecisionGroups").Index(i).Child("groupIndex"), g.GroupIndex, "must not be negative"))
		}
	}
	s.MandatoryDecisionGroups = groups
	return errs
}

// parseProgressDeadline parses a progressDeadline exactly as OCM's rollout library
// does: "" and "None" never time out; anything else must start with digits and a
// unit (h, m or s) and be a Go duration ("90s", "2h30m"; not "1d" nor "0"). "0s"
// times out at once.
func parseProgressDeadline(s string) (*time.Duration, error) {
	if s == "" || s == progressDeadlineNone {
		return nil, nil
	}
	if !progressDeadlineSyntax.MatchString(s) {
		return nil, fmt.Errorf(`must be "None" or a duration such as 90s, 10m or 2h30m`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil, fmt.Errorf(`must be "None" or a duration such as 90s, 10m or 2h30m: %v`, err)
	}
	return &d, nil
}

// normaliseSize checks a maxFailures or maxConcurrency value: a non-negative
// integer, or a whole percentage from 0% to 100%. Digits given as a string (the
// CRD accepts "5") become the integer; "" means unset (0); a percentage loses its
// leading zeros. OCM's rollout library would reject the digit string and silently
// use its default for a negative number or a percentage above 100%.
func normaliseSize(v intstr.IntOrString, path *field.Path) (intstr.IntOrString, *field.Error) {
	const want = `must be a non-negative integer or a percentage from 0% to 100%`
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 0 {
			return intstr.FromInt32(0), field.Invalid(path, v.IntVal, want)
		}
		return v, nil
	case intstr.String:
		s := v.StrVal
		if s == "" {
			return intstr.FromInt32(0), nil
		}
		if digits, isPercent := strings.CutSuffix(s, "%"); isPercent {
			n, ok := parseDigits(digits)
			if !ok || n > 100 {
				return intstr.FromInt32(0), field.Invalid(path, s, want)
			}
			return intstr.FromString(strconv.FormatInt(n, 10) + "%"), nil
		}
		n, ok := parseDigits(s)
		if !ok || n > math.MaxInt32 {
			return intstr.FromInt32(0), field.Invalid(path, s, want)
		}
		return intstr.FromInt32(int32(n)), nil
	default:
		return intstr.FromInt32(0), field.Invalid(path, v.String(), want)
	}
}

// parseDigits parses a non-empty string of ASCII digits that fits in an int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// rolloutSize is how OCM's rollout library turns maxFailures or maxConcurrency
// into a number of clusters out of total (its calculateRolloutSize, on values
// normaliseSize accepted): an integer as is, a percentage rounded up; a result
// that is not in 1..total becomes fallback.
func rolloutSize(v intstr.IntOrString, total, fallback int) int {
	size := fallback
	switch v.Type {
	case intstr.Int:
		size = int(v.IntVal)
	case intstr.String:
		pct, _ := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
		size = int(math.Ceil(pct / 100 * float64(total)))
	}
	if size <= 0 || size > total {
		return fallback
	}
	return size
}

// isDefaultConfig reports whether a RolloutConfig holds only defaults.
func isDefaultConfig(c clusterv1alpha1.RolloutConfig) bool {
	return c.MinSuccessTime == (metav1.Duration{}) &&
		(c.ProgressDeadline == "" || c.ProgressDeadline == progressDeadlineNone) &&
		isZeroSize(c.MaxFailures)
}

func isDefaultProgressive(p *clusterv1alpha1.RolloutProgressive) bool {
	return isDefaultConfig(p.RolloutConfig) && len(p.MandatoryDecisionGroups.MandatoryDecisionGroups) == 0 &&
		isZeroSize(p.MaxConcurrency)
}

func isDefaultPerGroup(p *clusterv1alpha1.RolloutProgressivePerGroup) bool {
	return isDefaultConfig(p.RolloutConfig) && len(p.MandatoryDecisionGroups.MandatoryDecisionGroups) == 0
}

// isZeroSize reports whether a maxFailures or maxConcurrency is unset.
func isZeroSize(v intstr.IntOrString) bool {
	return (v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && (v.StrVal == "" || v.StrVal == "0"))
}
