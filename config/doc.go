// Package config reads baton's config file, an OpenClaw-shaped JSON5 document, into a
// *policy.Config. It holds the JSON5 reader (keeping key order and the line and column of every
// value), the decoder (ParseConfig: the first bad value as a *ConfigError naming its key path,
// line and column, a syntax error as a *SyntaxError), CheckConfig (every problem, not only the
// first) and Unreachable (the model refs no reply could reach, where the file names them).
//
// The config model and the rules over it are policy's; config only builds it. Like policy it does
// no I/O (callers read the file), and policy is the only package of ours it imports.
package config
