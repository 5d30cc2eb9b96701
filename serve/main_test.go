package serve

import (
	"testing"

	"github.com/batonhq/baton/testsuite"
)

func TestMain(m *testing.M) { testsuite.Main(m) }
