package store

import "context"

// Ping checks that the database answers (the readiness probes of the worker and serve).
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
