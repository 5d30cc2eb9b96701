package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/batonhq/baton/policy"
)

// Record-outcome transactions per second, on one contended profile and on many profiles, on
// each backend. Goal: ≥ 2,000/s uncontended on SQLite (b.N / elapsed; see ns/op).
func BenchmarkRecordOutcome(b *testing.B) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(b.TempDir(), "bench.db")}
	if pg := os.Getenv(PostgresEnv); pg != "" {
		urls["postgres"] = pg
	}
	inc := func(st policy.ProfileStats) policy.ProfileStats { st.ErrorCount++; return st }
	for _, name := range []string{"sqlite", "postgres"} {
		url, ok := urls[name]
		if !ok {
			continue
		}
		s := open(b, url, nil)
		b.Run(name+"/uncontended", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := s.RecordOutcome(ctx, "bench", "p:solo", inc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/one-profile-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.RecordOutcome(ctx, "bench", "p:hot", inc); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		var n atomic.Int64
		b.Run(name+"/many-profiles-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("p:%d", n.Add(1)%64)
					if _, err := s.RecordOutcome(ctx, "bench", id, inc); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
