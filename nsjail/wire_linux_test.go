package nsjail

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill sets every exported field reachable from v to a value that is not
// the zero one and differs from field to field, so that a field the wire
// form lost or swapped shows in a round trip.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(*n % 100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(*n%200) + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.String:
		// Not UTF-8 on purpose: paths are bytes.
		v.SetString("s\xff" + string(rune('a'+*n%26)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), n)
		fill(s.Index(1), n)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		f := formOf(v.Type())
		if f.binary {
			sample, ok := binarySamples[v.Type()]
			if !ok {
				panic("no sample value of " + v.Type().String() + " in binarySamples")
			}
			v.Set(reflect.ValueOf(sample))
			return
		}
		for _, i := range f.fields {
			fill(v.Field(i), n)
		}
	}
}

// binarySamples are values of the types sent in their binary form, for
// fill: a zero value would not show that they cross.
var binarySamples = map[reflect.Type]any{
	reflect.TypeFor[netip.AddrPort](): netip.MustParseAddrPort("[::1]:8080"),
	reflect.TypeFor[netip.Addr]():     netip.MustParseAddr("127.0.0.2"),
	reflect.TypeFor[netip.Prefix]():   netip.MustParsePrefix("10.0.0.0/8"),
}

// Every field of every message survives the trip, byte for byte.
func TestWireRoundTrip(t *testing.T) {
	for _, msg := range protocolTypes() {
		typ := reflect.TypeOf(msg)
		t.Run(typ.Name(), func(t *testing.T) {
			for _, full := range []bool{true, false} {
				in := reflect.New(typ)
				if full {
					n := 0
					fill(in.Elem(), &n)
				}
				b, err := marshal(in.Elem().Interface())
				require.NoError(t, err)
				out := reflect.New(typ)
				require.NoError(t, unmarshal(b, out.Interface()))
				assert.Equal(t, in.Elem().Interface(), out.Elem().Interface())
			}
		})
	}
}

// A decoded message replaces what the value held, as a fresh one would be.
func TestWireReplaces(t *testing.T) {
	b, err := marshal(execReq{Path: "/bin/true"})
	require.NoError(t, err)
	r := execReq{Args: []string{"old"}, Env: []string{}, Extra: 3}
	require.NoError(t, unmarshal(b, &r))
	assert.Equal(t, execReq{Path: "/bin/true"}, r)
}

// Nil and empty stay apart.
func TestWireNilAndEmpty(t *testing.T) {
	for _, in := range []execReq{{}, {Args: []string{}, Env: []string{""}}} {
		b, err := marshal(in)
		require.NoError(t, err)
		var out execReq
		require.NoError(t, unmarshal(b, &out))
		assert.Equal(t, in, out)
	}
}

// The messages hold only what has a wire form, and nothing json would have
// treated otherwise than by its declared fields.
func TestWireCoversProtocolTypes(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, where string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.Interface, reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
			t.Errorf("%s: %s has no wire form", where, typ)
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(typ.Elem(), where)
		case reflect.Map:
			walk(typ.Key(), where)
			walk(typ.Elem(), where)
		case reflect.Struct:
			if f := formOf(typ); f.err != nil {
				t.Errorf("%s: %v", where, f.err)
				return
			} else if f.binary {
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				if !f.IsExported() {
					continue
				}
				name := typ.String() + "." + f.Name
				assert.False(t, f.Anonymous, "%s: embedded fields are not flattened on the wire", name)
				assert.NotEqual(t, "-", f.Tag.Get("json"), "%s: a field json skipped is sent on the wire", name)
				walk(f.Type, name)
			}
		}
	}
	for _, msg := range protocolTypes() {
		walk(reflect.TypeOf(msg), reflect.TypeOf(msg).String())
	}
}

// A message cut anywhere, grown, or in JSON is an error, never a panic or
// a value half read.
func TestWireRejectsDamage(t *testing.T) {
	n := 0
	var in reply
	fill(reflect.ValueOf(&in).Elem(), &n)
	b, err := marshal(in)
	require.NoError(t, err)
	for i := range len(b) {
		var out reply
		assert.Error(t, unmarshal(b[:i], &out), "cut at %d", i)
	}
	var out reply
	assert.Error(t, unmarshal(append(b, 0), &out), "a byte after the end")
	assert.ErrorIs(t, unmarshal([]byte(`{"Protocol":"corral-init/1 x"}`), &hello{}), errJSONMessage)
	// A length far beyond the message.
	assert.Error(t, unmarshal([]byte{wireMarker, 0xff, 0xff, 0xff, 0xff, 0x0f}, &hello{}))
	assert.Error(t, unmarshal([]byte{wireMarker, 2}, &hello{}), "a bool of 2")
	assert.Error(t, unmarshal(b, in), "not a pointer")
}

func FuzzWireUnmarshal(f *testing.F) {
	n := 0
	var in setup
	fill(reflect.ValueOf(&in).Elem(), &n)
	b, err := marshal(in)
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte{wireMarker})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s setup
		if unmarshal(data, &s) == nil {
			again, err := marshal(s)
			require.NoError(t, err)
			var s2 setup
			require.NoError(t, unmarshal(again, &s2))
			assert.Equal(t, s, s2)
		}
	})
}

// A helper of an earlier corral says hello in JSON: the error names it as
// such, not as a binary that is not corral's.
func TestHelloOfAnEarlierCorral(t *testing.T) {
	caller, helper := connPair(t)
	sendRaw(t, helper, []byte(`{"Protocol":"corral-init/1 c6f95a774c9c9115"}`))
	err := awaitHello(caller, "/opt/corral-init")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/opt/corral-init")
	assert.Contains(t, err.Error(), "earlier corral")

	caller, helper = connPair(t)
	require.NoError(t, sayHello(helper))
	assert.NoError(t, awaitHello(caller, "/opt/corral-init"), "the same version")
}
