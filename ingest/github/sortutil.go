package github

import "sort"

func sortStrings(s []string) { sort.Strings(s) }

func sortKV[T any](s []T, less func(i, j int) bool) { sort.SliceStable(s, less) }
