package registry

import (
	"hash/maphash"
)

// What a listing's next entry is, by its name and version (readCtx.take).
const (
	takeOK      = iota // taken: counted, and remembered
	takeDup            // a second entry for name@version: the first is kept
	takeTooMany        // a version of a name past MaxVersionsPerName
)

// seen is what one read of a listing remembers of the entries it took:
// their name@version keys (a second copy is a duplicate) and the versions
// taken per name (MaxVersionsPerName).
type seen interface {
	// take decides on the next entry in file order, and remembers it
	// when it is taken. h are the entry's hashes (hashEntry), when the
	// implementation uses them.
	take(name, version string, h entryHashes, isLatest bool) int
	distinctNames() int
	hashes() *maphash.Seed // the seed of h; nil: h is not used
}

// exactSeen is the reference: a map of keys and a map of names.
type exactSeen struct {
	keys  map[entryKey]struct{}
	names versionCounts
}

type entryKey struct{ name, version string }

func (s *exactSeen) take(name, version string, _ entryHashes, isLatest bool) int {
	k := entryKey{name, version}
	if _, dup := s.keys[k]; dup {
		return takeDup
	}
	if !s.names.admit(name, isLatest) {
		return takeTooMany
	}
	s.keys[k] = struct{}{}
	return takeOK
}

func (s *exactSeen) distinctNames() int    { return len(s.names) }
func (s *exactSeen) hashes() *maphash.Seed { return nil }

// hashedSeen gives exactSeen's answers at a fraction of its cost. Every
// entry passes through it in file order on one goroutine, the one serial
// step of the fast path, and with two maps of strings it took about a
// tenth of the fast path's CPU time in profiles of benchmark 1 (2 × 170k
// records, bench/RESULTS.md), all of it on the reading goroutine: two
// strings hashed per entry, and a cache miss or two in a table of 170k
// keys. Here the hashes of each entry's
// name and version are computed beforehand, in parallel, by the parsers
// (hashEntry); names are found by hash, and the last one found is tried
// first (a listing holds a server's versions together); and the versions
// taken of each name are a short list threaded through one array, which
// a listing's order keeps together too, so a duplicate check reads the few
// versions of one server instead of a table of all of them. A name with
// many versions gets a map. A hash is never trusted alone: a hit is
// confirmed on the strings, and a name whose hash another name already has
// goes to an exact map.
type hashedSeen struct {
	seed   maphash.Seed
	names  map[uint64]int32 // name hash -> index in nameOf
	namesX map[string]int32 // names whose hash an earlier, different name has
	nameOf []nameState
	vers   []verNode
	last   int32 // the name found last (-1: none)
}

type nameState struct {
	name string
	h    uint64
	c    uint32 // as in versionCounts
	top  int32  // this name's newest node in vers (-1: none)
	n    int32  // versions in the list
	big  map[string]struct{}
}

type verNode struct {
	h    uint64
	v    string
	prev int32 // the same name's previous node (-1: none)
}

// bigAt is the list length past which a name's versions go to a map.
const bigAt = 32

func newHashedSeen(hint int) *hashedSeen {
	return &hashedSeen{seed: maphash.MakeSeed(), names: make(map[uint64]int32, hint/3),
		nameOf: make([]nameState, 0, hint/3), vers: make([]verNode, 0, hint), last: -1}
}

// entryHashes are the hashes of an entry's name and version.
type entryHashes struct{ name, version uint64 }

// hashEntry hashes name and version with seed.
func hashEntry(seed maphash.Seed, name, version string) entryHashes {
	return entryHashes{name: maphash.String(seed, name) & hashMask, version: maphash.String(seed, version) & hashMask}
}

// hashMask is a test hook: a narrow mask makes hashes collide.
var hashMask = ^uint64(0)

func (s *hashedSeen) hashes() *maphash.Seed { return &s.seed }
func (s *hashedSeen) distinctNames() int    { return len(s.nameOf) }

// find returns the index of name in nameOf, -1 when it is new.
func (s *hashedSeen) find(name string, h uint64) int32 {
	if s.last >= 0 && s.nameOf[s.last].h == h && s.nameOf[s.last].name == name {
		return s.last
	}
	i, ok := s.names[h]
	switch {
	case !ok:
		return -1
	case s.nameOf[i].name == name:
	default:
		if i, ok = s.namesX[name]; !ok {
			return -1
		}
	}
	s.last = i
	return i
}

// has reports whether version is in the list of name i.
func (s *hashedSeen) has(i int32, version string, h uint64) bool {
	ns := &s.nameOf[i]
	if ns.big != nil {
		_, ok := ns.big[version]
		return ok
	}
	for k := ns.top; k >= 0; k = s.vers[k].prev {
		if s.vers[k].h == h && s.vers[k].v == version {
			return true
		}
	}
	return false
}

func (s *hashedSeen) take(name, version string, h entryHashes, isLatest bool) int {
	i := s.find(name, h.name)
	if i >= 0 && s.has(i, version, h.version) {
		return takeDup
	}
	var c uint32
	if i >= 0 {
		c = s.nameOf[i].c
	}
	if c&^latestTaken >= MaxVersionsPerName && (!isLatest || c&latestTaken != 0) {
		return takeTooMany
	}
	c++
	if isLatest {
		c |= latestTaken
	}
	if i < 0 {
		i = int32(len(s.nameOf))
		s.nameOf = append(s.nameOf, nameState{name: name, h: h.name, top: -1})
		if _, taken := s.names[h.name]; !taken {
			s.names[h.name] = i
		} else {
			if s.namesX == nil {
				s.namesX = map[string]int32{}
			}
			s.namesX[name] = i
		}
		s.last = i
	}
	ns := &s.nameOf[i]
	ns.c = c
	switch {
	case ns.big != nil:
		ns.big[version] = struct{}{}
	case ns.n == bigAt:
		ns.big = make(map[string]struct{}, 2*bigAt)
		for k := ns.top; k >= 0; k = s.vers[k].prev {
			ns.big[s.vers[k].v] = struct{}{}
		}
		ns.big[version] = struct{}{}
	default:
		s.vers = append(s.vers, verNode{h: h.version, v: version, prev: ns.top})
		ns.top = int32(len(s.vers) - 1)
		ns.n++
	}
	return takeOK
}
