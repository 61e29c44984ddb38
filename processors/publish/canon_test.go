package publish

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// refCanonical and refSeal are Canonical and Seal as first written
// (encoding/json, a map, jcs, twice): the reference the canonical encoder
// and the member insertion must equal.
func refCanonical(v any) ([]byte, string, error) { return canonicalJCS(v) }

func refSeal(v any) (sealed []byte, server string, leaf []byte, err error) {
	c, server, err := refCanonical(v)
	if err != nil {
		return nil, "", nil, err
	}
	sum := contentHash(c)
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(c))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, "", nil, err
	}
	h, _ := json.Marshal(sum)
	m[HashField] = h
	b, _ := json.Marshal(m)
	sealed, err = jcs.Transform(b)
	return sealed, server, c, err
}

func contentHash(c []byte) string {
	r, _ := SealCanonical(c, "x")
	return r.ContentSHA256
}

type inner struct {
	Kind  string    `json:"kind"`
	At    time.Time `json:"at"`
	URI   string    `json:"uri,omitempty"`
	Count int       `json:"count,omitempty"`
}

type Embedded struct {
	Class string `json:"class"`
	Zeta  string `json:"zeta,omitempty"`
}

type fuzzRec struct {
	Server  string             `json:"server"`
	Hash    string             `json:"content_sha256,omitempty"`
	Text    string             `json:"text"`
	Num     float64            `json:"num"`
	Int     int64              `json:"int"`
	Uint    uint64             `json:"uint"`
	Ptr     *float64           `json:"ptr"`
	Opt     *inner             `json:"opt,omitempty"`
	List    []inner            `json:"list"`
	Nil     []string           `json:"nil"`
	Values  map[string]float64 `json:"values,omitempty"`
	Weights map[string]int     `json:"weights"`
	Any     any                `json:"any"`
	Flag    bool               `json:"flag"`
	Arr     [2]string          `json:"arr"`
	NoTag   string
	Bad     string `json:"a b,omitempty"`
	Skip    string `json:"-"`
	private string
	Embedded
	// Keys whose UTF-16 order differs from their byte order.
	E000 string `json:"\ue000"`
	Sup  string `json:"𝄞"`
}

func checkCanonical(t *testing.T, v any) {
	t.Helper()
	got, gs, gerr := Canonical(v)
	want, ws, werr := refCanonical(v)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("errors differ: %v vs reference %v", gerr, werr)
	}
	if gerr != nil {
		return
	}
	if !bytes.Equal(got, want) || gs != ws {
		t.Fatalf("canonical differs:\n got  %s (%q)\n want %s (%q)", got, gs, want, ws)
	}
	// Behind a pointer a struct is encoded from its fields' addresses, not
	// through reflect.Values: the same bytes.
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		pc, ps, perr := Canonical(p.Interface())
		if perr != nil || !bytes.Equal(pc, want) || ps != ws {
			t.Fatalf("canonical of a pointer differs (%v):\n got  %s (%q)\n want %s (%q)", perr, pc, ps, want, ws)
		}
		if _, _, err := appendCanonical(nil, v); err == nil {
			if _, _, err := appendCanonical(nil, p.Interface()); err != nil {
				t.Fatalf("the encoder took the value but refused the pointer: %v", err)
			}
		}
	}
	s1, _, l1, err1 := Seal(v)
	s2, _, l2, err2 := refSeal(v)
	if err1 != nil || err2 != nil || !bytes.Equal(s1, s2) || !bytes.Equal(l1, l2) {
		t.Fatalf("sealed differs (%v, %v):\n got  %s\n want %s", err1, err2, s1, s2)
	}
	checkAppendSealed(t, v, want, s2)
}

func TestCanonicalMatchesJCS(t *testing.T) {
	f := 0.1
	negZero := math.Copysign(0, -1)
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 5*3600+1800))
	cases := []any{
		fuzzRec{Server: "io.github.x/y", Text: "a<b>&c\u2028\u2029\x00\x1f\x7f\"\\\t\n\r\b\f é 𝄞 \xff\xfe", Num: 1e21, Int: 1<<53 + 1, Uint: math.MaxUint64,
			Ptr: &f, Opt: &inner{Kind: "k", At: at}, List: []inner{{Kind: "a", At: at, URI: "/u", Count: 3}},
			Values: map[string]float64{"b": 1e-7, "a": -0.5, "\ue000": 1, "𝄞": 2, "z\xff": 3}, Weights: map[string]int{}, Any: map[string]any{"x": []any{1.5, "y", nil, true}},
			Embedded: Embedded{Class: "c"}, E000: "e", Sup: "s", Bad: "bad tag name", NoTag: "n"},
		fuzzRec{Server: "s", Num: negZero, Int: -(1 << 60), Hash: "ignored"},
		map[string]any{"server": "m", "content_sha256": "x", "n": 123456789012345678, "f": 1e300, "s": "\u2028"},
		map[string]any{"server": 5},
		map[string]any{"server": "n", "num": json.Number("1.50"), "list": []any{json.Number("7"), "x"}},
		map[string]any{"server": "r", "raw": json.RawMessage(`{"b":1,"a":[2,3e2]}`)},
		fuzzRec{},
		fuzzRec{Server: "x", Num: math.NaN()},
		fuzzRec{Server: "x", Opt: &inner{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, c := range cases {
		checkCanonical(t, c)
	}
	// The weights map with a key that is not valid UTF-8 goes the jcs way.
	checkCanonical(t, fuzzRec{Server: "x", Weights: map[string]int{"a\xff": 1, "a\xfe": 2}})
}

func FuzzCanonicalMatchesJCS(f *testing.F) {
	f.Add("io.github.x/y", "text <&> \u2028", "key", 1.5, int64(42), uint64(7), int64(0), "\ue000")
	f.Add("s\xff", "\x00\x1f\"\\", "𝄞", 1e-7, int64(1<<62), uint64(1<<63), int64(1e18), "a")
	f.Add("s", "", "", math.Copysign(0, -1), int64(-1), uint64(0), int64(-62135596800), "")
	f.Fuzz(func(t *testing.T, server, text, key string, num float64, n int64, u uint64, unix int64, k2 string) {
		at := time.Unix(unix%(1<<40), n%1e9).UTC()
		v := fuzzRec{Server: server, Text: text, Num: num, Int: n, Uint: u, Ptr: &num,
			Opt:    &inner{Kind: key, At: at, URI: text},
			List:   []inner{{Kind: k2, At: at}},
			Values: map[string]float64{key: num, k2: -num, text: 1}, Weights: map[string]int{key: int(n), k2: 3},
			Any: map[string]any{key: text, "n": num}, Embedded: Embedded{Class: key, Zeta: k2}, NoTag: k2, E000: text, Sup: key}
		checkCanonical(t, v)
		checkCanonical(t, map[string]any{"server": server, key: text, k2: num})
	})
}

// TestCanonicalEncoderIsUsed: the comparisons above mean something only if
// the encoder (not the jcs fallback) produced the bytes.
func TestCanonicalEncoderIsUsed(t *testing.T) {
	f := 2.5
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	v := fuzzRec{Server: "x\xff", Text: "a<b>\u2028\x01", Ptr: &f, Opt: &inner{At: at}, Values: map[string]float64{"𝄞": 1, "\ue000": 2},
		Any: map[string]any{"k": []any{"v", 1.0}}, Embedded: Embedded{Class: "c"}}
	if _, _, err := appendCanonical(nil, v); err != nil {
		t.Fatalf("encoder refused a supported value: %v", err)
	}
	if _, _, err := appendCanonical(nil, map[string]any{"server": "s", "n": 1}); err != nil {
		t.Fatalf("encoder refused a map: %v", err)
	}
	checkCanonical(t, v)
}

type hidden struct {
	At     time.Time          `json:"at"`
	Values map[string]float64 `json:"values"`
}

type withHidden struct {
	Server string `json:"server"`
	hidden
}

// TestCanonicalPromotedFromUnexported: fields promoted from an unexported
// embedded struct are encoded (as encoding/json does) without reflect's
// read-only panics.
func TestCanonicalPromotedFromUnexported(t *testing.T) {
	v := withHidden{Server: "s", hidden: hidden{At: time.Date(2026, 1, 2, 0, 0, 0, 5, time.UTC), Values: map[string]float64{"b": 1, "a": 2}}}
	checkCanonical(t, v)
	checkCanonical(t, &v)
}

// TestPlain8 checks the eight-byte test of appendString against the
// byte table, for every byte value in every position.
func TestPlain8(t *testing.T) {
	base := []byte("abcdefgh")
	for pos := range 8 {
		for c := range 256 {
			b := append([]byte(nil), base...)
			b[pos] = byte(c)
			want := true
			for _, x := range b {
				want = want && x < 0x80 && plain[x]
			}
			if got := plain8(load64(string(b))); got != want {
				t.Fatalf("%q: plain8 %v, want %v", b, got, want)
			}
		}
	}
}

// checkAppendSealed: AppendSealed (one encoder pass, the hash member placed
// where the encoder met it) gives what Canonical then SealCanonical give,
// for the value and behind a pointer, into a dirty reused buffer.
func checkAppendSealed(t *testing.T, v any, canon, sealed []byte) {
	t.Helper()
	want, err := SealCanonical(canon, "")
	if err != nil {
		t.Fatal(err)
	}
	vals := []any{v}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		vals = append(vals, p.Interface())
	}
	for _, x := range vals {
		dirty := []byte("leftovers of the previous record")
		c, r, err := AppendSealed(dirty[:0], x)
		if err != nil {
			t.Fatalf("AppendSealed(%T): %v", x, err)
		}
		if !bytes.Equal(c, canon) || !bytes.Equal(r.Sealed, sealed) || r.ContentSHA256 != want.ContentSHA256 || !bytes.Equal(r.LeafHash, want.LeafHash) {
			t.Fatalf("AppendSealed(%T) differs:\n canon  %s\n want   %s\n sealed %s\n want   %s", x, c, canon, r.Sealed, sealed)
		}
	}
}

// TestAppendSealedPlacesTheHash covers every place of the hash member: only
// member, first, between, last, and a record without that field.
func TestAppendSealedPlacesTheHash(t *testing.T) {
	type only struct {
		Hash string `json:"content_sha256,omitempty"`
	}
	type first struct {
		Server string `json:"server"`
		Hash   string `json:"content_sha256,omitempty"`
		Z      int    `json:"z"`
	}
	type last struct {
		A      int    `json:"a"`
		Hash   string `json:"content_sha256,omitempty"`
		Server string `json:"server"`
	}
	type without struct {
		Server string `json:"server"`
		X      []int  `json:"x"`
	}
	type before struct {
		Server string `json:"server"`
		A      string `json:"a"`
		Hash   string `json:"content_sha256"`
	}
	for _, v := range []any{first{Server: "s", Z: 1}, last{A: 1, Server: "s"}, without{Server: "s", X: []int{1}}, before{Server: "s", A: "x", Hash: "set"},
		map[string]any{"server": "m", "a": 1, "zz": 2}} {
		c, srv, err := Canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := SealCanonical(c, srv)
		if err != nil {
			t.Fatal(err)
		}
		checkAppendSealed(t, v, c, want.Sealed)
	}
	if _, _, err := AppendSealed(nil, only{}); err == nil {
		t.Error("a record without a server was sealed")
	}
}
