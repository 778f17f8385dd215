//go:build !unix

package scrape

import "time"

func cpuTime() time.Duration { return 0 }
