// Package logging builds baton's zap logger from LOG_LEVEL / LOG_FORMAT and adapts it to the
// Temporal SDK's log.Logger, so the SDK's own lines come out in the same format as ours.
package logging

import (
	"fmt"
	"slices"

	sdklog "go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Formats and levels accepted by New, for error messages that list them.
var (
	Formats = []string{"json", "console"}
	Levels  = []string{"debug", "info", "warn", "error"}
)

// New builds a logger writing to stderr. level is one of Levels, format one of Formats.
func New(level, format string) (*zap.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil || !slices.Contains(Levels, level) {
		return nil, fmt.Errorf("log level %q is not one of %v", level, Levels)
	}
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("log format %q is not one of %v", format, Formats)
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Encoding = format
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	if format == "console" {
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
	}
	cfg.Sampling = nil // every failover decision matters; none may be sampled away
	cfg.DisableStacktrace = true
	cfg.OutputPaths = []string{"stderr"}
	cfg.ErrorOutputPaths = []string{"stderr"}
	return cfg.Build()
}

// SDK adapts a zap logger to the Temporal SDK's logger interface.
func SDK(l *zap.Logger) sdklog.Logger {
	return sdkLogger{l.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

type sdkLogger struct{ s *zap.SugaredLogger }

var (
	_ sdklog.Logger          = sdkLogger{}
	_ sdklog.WithLogger      = sdkLogger{}
	_ sdklog.WithSkipCallers = sdkLogger{}
)

func (l sdkLogger) Debug(msg string, keyvals ...any) { l.s.Debugw(msg, keyvals...) }
func (l sdkLogger) Info(msg string, keyvals ...any)  { l.s.Infow(msg, keyvals...) }
func (l sdkLogger) Warn(msg string, keyvals ...any)  { l.s.Warnw(msg, keyvals...) }
func (l sdkLogger) Error(msg string, keyvals ...any) { l.s.Errorw(msg, keyvals...) }

func (l sdkLogger) With(keyvals ...any) sdklog.Logger { return sdkLogger{l.s.With(keyvals...)} }

func (l sdkLogger) WithCallerSkip(skip int) sdklog.Logger {
	return sdkLogger{l.s.WithOptions(zap.AddCallerSkip(skip))}
}

// Discard drops every line: for command-line clients, which report errors themselves.
var Discard sdklog.Logger = discard{}

type discard struct{}

func (discard) Debug(string, ...any) {}
func (discard) Info(string, ...any)  {}
func (discard) Warn(string, ...any)  {}
func (discard) Error(string, ...any) {}
