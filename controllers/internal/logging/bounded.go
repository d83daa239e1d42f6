package logging

import "github.com/go-logr/logr"

// MaxVerbosity is the most verbose level the controllers log at, whatever
// their logger allows. From V(8) on, client-go writes the bodies of API
// requests and responses into the logger of the request's context — a
// reconciler's — and those bodies hold the data of the Secrets that
// ConfigurationPolicies read and enforce, and of the policies that embed them.
// Up to V(7) it logs verbs, URLs, status codes and headers, with credentials
// masked.
const MaxVerbosity = 7

// Bounded is logger without its levels above MaxVerbosity.
func Bounded(logger logr.Logger) logr.Logger {
	sink := logger.GetSink()
	if sink == nil {
		return logger
	}
	if withDepth, ok := sink.(logr.CallDepthLogSink); ok {
		sink = withDepth.WithCallDepth(1) // callers are reported past boundedSink
	}
	return logr.New(boundedSink{sink: sink, max: MaxVerbosity})
}

// boundedSink passes the log lines of a sink up to verbosity max and drops the
// more verbose ones.
type boundedSink struct {
	sink logr.LogSink
	max  int
}

// Init does nothing: the wrapped sink was initialised by the logger it came from.
func (boundedSink) Init(logr.RuntimeInfo) {}

func (s boundedSink) Enabled(level int) bool { return level <= s.max && s.sink.Enabled(level) }

func (s boundedSink) Info(level int, msg string, keysAndValues ...any) {
	if level <= s.max {
		s.sink.Info(level, msg, keysAndValues...)
	}
}

func (s boundedSink) Error(err error, msg string, keysAndValues ...any) {
	s.sink.Error(err, msg, keysAndValues...)
}

func (s boundedSink) WithValues(keysAndValues ...any) logr.LogSink {
	return boundedSink{sink: s.sink.WithValues(keysAndValues...), max: s.max}
}

func (s boundedSink) WithName(name string) logr.LogSink {
	return boundedSink{sink: s.sink.WithName(name), max: s.max}
}
