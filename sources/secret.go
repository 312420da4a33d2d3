package sources

import "log/slog"

// Secret holds an API key. Every way of printing it prints a placeholder, so
// a key that ends up in a log line, an error or a %v stays hidden.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string   { return redacted }
func (Secret) GoString() string { return redacted }

// LogValue keeps the key out of slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText keeps the key out of JSON and YAML dumps.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Reveal returns the key itself; only the request header uses it.
func (s Secret) Reveal() string { return string(s) }
