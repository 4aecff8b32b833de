package corral

import (
	"errors"
	"sync/atomic"

	"github.com/corralhq/corral/reexec"
)

// Init must be the first call in main of every program that uses corral: the
// library re-executes the program's own binary to build sandboxes, and Init is
// where those re-executed copies do their work. It returns false in the
// ordinary case; when it returns true the process was one of corral's helper
// processes and main must return at once.
//
//	func main() {
//		if corral.Init() {
//			return
//		}
//		// the program proper
//	}
//
// A test binary is re-executed the same way, so a package whose tests start
// sandboxes calls Init first in TestMain:
//
//	func TestMain(m *testing.M) {
//		if corral.Init() {
//			return
//		}
//		os.Exit(m.Run())
//	}
func Init() bool {
	initCalled.Store(true)
	registerEntrypoints()
	return reexec.Dispatch()
}

// initCalled guards against a program that never calls Init: its
// re-executed copies would run the program itself instead of building
// sandboxes, and every spawn would hang or multiply.
var initCalled atomic.Bool

// ErrNoInit is returned by New when Init was not called first in main, or,
// in a test binary, first in TestMain.
var ErrNoInit = errors.New("corral.Init was not called first in main, or in TestMain for tests that start sandboxes (see the package documentation)")
