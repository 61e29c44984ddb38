package registry

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
)

// firstSpecial is the index of the first byte of w that the string
// scanners stop at ('"', '\\', < 0x20, >= 0x80), or 8.
func firstSpecial(w [8]byte) int {
	for i, c := range w {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return 8
}

func checkSpecialMask(t *testing.T, w [8]byte) {
	t.Helper()
	m := specialMask(binary.LittleEndian.Uint64(w[:]))
	got := 8
	if m != 0 {
		got = bits.TrailingZeros64(m) >> 3
	}
	if want := firstSpecial(w); got != want {
		t.Fatalf("%q: first special byte at %d, specialMask says %d (mask %016x)", w[:], want, got, m)
	}
}

// TestSpecialMaskFindsTheFirstSpecialByte: every byte value at every
// position, after plain bytes and before any bytes (borrows from a
// special byte must not hide it or move it).
func TestSpecialMaskFindsTheFirstSpecialByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for pos := range 8 {
		for c := range 256 {
			for range 64 {
				var w [8]byte
				for i := range w {
					switch {
					case i < pos:
						w[i] = byte(0x20 + r.IntN(0x5f)) // plain ASCII, may be '"' or '\\'
					case i == pos:
						w[i] = byte(c)
					default:
						w[i] = byte(r.IntN(256))
					}
				}
				checkSpecialMask(t, w)
			}
		}
	}
}

func FuzzSpecialMask(f *testing.F) {
	f.Add(uint64(0), uint64(0x2222222222222222))
	f.Fuzz(func(t *testing.T, x, _ uint64) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], x)
		checkSpecialMask(t, w)
	})
}

// TestAppendRFC3339NanoIsTheLibrary: the hand-written formatter of the
// content hash writes what time.AppendFormat(RFC3339Nano) writes.
func TestAppendRFC3339NanoIsTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	times := []time.Time{
		time.Date(2025, 6, 15, 13, 0, 0, 0, time.UTC),
		time.Date(2025, 6, 15, 13, 0, 0, 120_000_000, time.UTC),
		time.Date(2025, 6, 15, 13, 0, 0, 1, time.UTC),
		time.Date(2025, 6, 15, 13, 0, 0, 999_999_999, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 6, 15, 13, 0, 0, 5, time.FixedZone("x", 5*3600+1800)),
	}
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(400_000_000_000)-200_000_000_000, r.Int64N(1e9)*int64(r.IntN(2))).In(time.FixedZone("", 60*(r.IntN(1500)-750))))
	}
	for _, tm := range times {
		want := tm.UTC().AppendFormat(nil, time.RFC3339Nano)
		if got := appendRFC3339Nano(nil, tm); string(got) != string(want) {
			t.Fatalf("%v: %s, library %s", tm, got, want)
		}
	}
}
