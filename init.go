package corral

import "github.com/corralhq/corral/reexec"

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
func Init() bool {
	registerEntrypoints()
	return reexec.Dispatch()
}
