//go:build !unix

package diffbench

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
