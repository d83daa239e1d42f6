package templates

import gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"

// HubResolverConfig is the configuration of a resolver of hub templates, as
// OCM's propagator makes it: the {{hub ... hub}} delimiters, and autoindent
// and indent relative to a policy template's place in its Policy (8 spaces).
func HubResolverConfig() gotemplates.Config {
	return gotemplates.Config{
		AdditionalIndentation: 8,
		StartDelim:            HubStartDelim,
		StopDelim:             HubStopDelim,
	}
}
