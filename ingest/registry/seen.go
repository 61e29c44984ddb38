package registry

import (
	"hash/maphash"
)

// seenSet is what one read of a listing remembers of the entries it took:
// the name@version keys (a second copy is a duplicate) and the versions
// taken per name (MaxVersionsPerName). Every entry passes through it in
// file order on one goroutine, the one serial step of the fast path, so it
// is built to be cheap there: the 64-bit hashes of each entry's name and
// key are computed beforehand, in parallel, by the parsers (entryHashes),
// and the tables are keyed by them. A Go map of uint64 keys probes one
// small group per lookup; a map of name and version strings hashes both
// strings on the serial goroutine and holds four times the bytes. A hash
// is never trusted alone: a hit is confirmed against the key it stands
// for, and a key whose hash another key already has goes to an exact map
// of strings. The 2 × 170k-record benchmark spent 0.36 s of 1.43 s here
// with the maps of strings (bench/RESULTS.md, profile of benchmark 1).
type seenSet struct {
	seed maphash.Seed

	keys   map[uint64]int32 // key hash -> index in keyOf
	keyOf  []entryKey
	keysX  map[entryKey]struct{} // keys whose hash an earlier, different key has
	names  map[uint64]int32      // name hash -> index in nameOf
	nameOf []nameCount
	namesX versionCounts // names whose hash an earlier, different name has

	// exact: every key and name in the exact maps, no hashes (the
	// reference reader, as it was before the fast path).
	exact bool
}

type entryKey struct{ name, version string }

type nameCount struct {
	name string
	c    uint32 // as in versionCounts
}

func newSeenSet(hint int, exact bool) *seenSet {
	if exact {
		return &seenSet{exact: true, keysX: make(map[entryKey]struct{}, hint), namesX: make(versionCounts, hint/2)}
	}
	return &seenSet{seed: maphash.MakeSeed(),
		keys: make(map[uint64]int32, hint), keyOf: make([]entryKey, 0, hint),
		names: make(map[uint64]int32, hint/2), nameOf: make([]nameCount, 0, hint/2)}
}

// entryHashes are the hashes of an entry's name and of its name@version key.
type entryHashes struct{ name, key uint64 }

// hashEntry hashes name and version with seed.
func hashEntry(seed maphash.Seed, name, version string) entryHashes {
	hn := maphash.String(seed, name)
	hv := maphash.String(seed, version)
	// A multiply and an add mix the two: the key's hash only spreads the
	// table, every hit is confirmed on the strings.
	return entryHashes{name: hn & hashMask, key: (hn*0x9E3779B97F4A7C15 + hv) & hashMask}
}

// hashMask is a test hook: a narrow mask makes hashes collide.
var hashMask = ^uint64(0)

// has reports whether the key was added before.
func (s *seenSet) has(k entryKey, h uint64) bool {
	if s.exact {
		_, ok := s.keysX[k]
		return ok
	}
	i, ok := s.keys[h]
	if !ok {
		return false
	}
	if s.keyOf[i] == k {
		return true
	}
	_, ok = s.keysX[k]
	return ok
}

// add records a key that has (no earlier add of it).
func (s *seenSet) add(k entryKey, h uint64) {
	if _, ok := s.keys[h]; !ok && !s.exact {
		s.keys[h] = int32(len(s.keyOf))
		s.keyOf = append(s.keyOf, k)
		return
	}
	if s.keysX == nil {
		s.keysX = map[entryKey]struct{}{}
	}
	s.keysX[k] = struct{}{}
}

// admit is versionCounts.admit: whether one more version of name may be
// taken, counted when it may.
func (s *seenSet) admit(name string, h uint64, isLatest bool) bool {
	if s.exact {
		return s.namesX.admit(name, isLatest)
	}
	i, found := s.names[h]
	if found && s.nameOf[i].name != name {
		if s.namesX == nil {
			s.namesX = versionCounts{}
		}
		return s.namesX.admit(name, isLatest)
	}
	var c uint32
	if found {
		c = s.nameOf[i].c
	}
	if c&^latestTaken >= MaxVersionsPerName && (!isLatest || c&latestTaken != 0) {
		return false
	}
	c++
	if isLatest {
		c |= latestTaken
	}
	if found {
		s.nameOf[i].c = c
	} else {
		s.names[h] = int32(len(s.nameOf))
		s.nameOf = append(s.nameOf, nameCount{name, c})
	}
	return true
}

// distinctNames is the number of names admitted.
func (s *seenSet) distinctNames() int { return len(s.nameOf) + len(s.namesX) }
