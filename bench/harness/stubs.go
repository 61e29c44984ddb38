package harness

import "context"

// Benchmarks register themselves here from their files' init.
var benchScore, benchAPI, benchPipeline, benchMicro func(ctx context.Context, c Config, a, b string) (Section, error)
