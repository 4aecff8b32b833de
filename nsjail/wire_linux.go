package nsjail

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
)

// The wire form of the protocol's messages: a marker byte, then the value's
// exported fields in declaration order, with no names. Both ends are built
// from the same types (the hello's protocol digest says so), so the order
// is the schema. encoding/json did this job before, but each init is a
// fresh process, and json's per-type reflection (field lists, names, tags)
// on the set-up, the reply and their nested types cost every sandbox about
// half a millisecond of CPU; this walk needs no per-type set-up beyond the
// list of exported fields.
//
// Booleans are one byte; signed integers zig-zag varints, unsigned ones
// varints, each in its shortest form; floats their 8 IEEE bytes; strings and byte slices a length
// and the bytes, kept byte for byte (no UTF-8 repair). A slice or map is
// 0 when nil, else its length plus one, then its elements, a map's in the
// order of its keys' wire forms; a pointer is 0 when nil, else 1 and the
// value. So a message has one encoding, and decodes from nothing else. A struct with unexported fields (netip's
// addresses, time.Time) is sent as its MarshalBinary bytes, like a byte
// slice, and is an error without that method (this package's own
// messages excepted, whose unexported fields hold their end's state): its exported fields alone
// would arrive as an empty value. Interfaces, channels, functions and
// complex numbers have no wire form: TestWireCoversProtocolTypes keeps
// them out of the messages.

// wireMarker opens every message. A JSON message, from a corral of an
// earlier version, opens with '{' instead.
const wireMarker = 0xc5

// errJSONMessage says the peer sent JSON: it is a corral of an earlier
// version, which spoke encoding/json on this socket.
var errJSONMessage = errors.New("a JSON message: the peer is a corral of an earlier version")

// marshal returns v's wire form; a message passed by pointer is sent as
// the value it points to.
func marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("marshal a nil %T", v)
		}
		rv = rv.Elem()
	}
	return appendValue([]byte{wireMarker}, rv)
}

// unmarshal decodes b into the value v points to, replacing every exported
// field.
func unmarshal(b []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("unmarshal into %T: want a non-nil pointer", v)
	}
	if len(b) > 0 && b[0] == '{' {
		return errJSONMessage
	}
	if len(b) == 0 || b[0] != wireMarker {
		return errors.New("not a corral message")
	}
	d := decoder{b: b[1:]}
	d.value(rv.Elem())
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the message", len(d.b))
	}
	if d.err != nil {
		return fmt.Errorf("decode %s: %w", rv.Elem().Type(), d.err)
	}
	return nil
}

// structForm is how a struct type crosses the wire, worked out once per
// type: its exported fields in order, or its binary form when it has
// unexported fields.
type structForm struct {
	fields []int
	binary bool  // sent as MarshalBinary's bytes
	err    error // it has unexported fields and no binary form
}

var structForms sync.Map // reflect.Type -> *structForm

// wirePackage is this package's path: its structs' unexported fields are
// never sent.
var wirePackage = reflect.TypeFor[structForm]().PkgPath()

var (
	binaryMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

func formOf(t reflect.Type) *structForm {
	if f, ok := structForms.Load(t); ok {
		return f.(*structForm)
	}
	f := &structForm{}
	opaque := false
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			f.fields = append(f.fields, i)
		} else {
			// This package's messages keep state of their own end in
			// unexported fields; another package's are its value.
			opaque = opaque || t.PkgPath() != wirePackage
		}
	}
	switch {
	case !opaque:
	case t.Implements(binaryMarshaler) && reflect.PointerTo(t).Implements(binaryUnmarshaler):
		f.binary, f.fields = true, nil
	default:
		f.err = fmt.Errorf("%s has unexported fields and no MarshalBinary: no wire form", t)
	}
	structForms.Store(t, f)
	return f
}

func appendValue(b []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(b, v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float())), nil
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...), nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0), nil
		}
		return appendValue(append(b, 1), v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return append(b, 0), nil
		}
		b = binary.AppendUvarint(b, uint64(v.Len())+1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(b, v.Bytes()...), nil
		}
		return appendElems(b, v)
	case reflect.Array:
		return appendElems(b, v)
	case reflect.Map:
		if v.IsNil() {
			return append(b, 0), nil
		}
		return appendMap(binary.AppendUvarint(b, uint64(v.Len())+1), v)
	case reflect.Struct:
		f := formOf(v.Type())
		if f.err != nil {
			return nil, f.err
		}
		if f.binary {
			p, err := v.Interface().(encoding.BinaryMarshaler).MarshalBinary()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.Type(), err)
			}
			return append(binary.AppendUvarint(b, uint64(len(p))), p...), nil
		}
		var err error
		for _, i := range f.fields {
			if b, err = appendValue(b, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s has no wire form", v.Type())
}

// appendMap appends a map's entries in the order of their keys' wire
// forms, which the decoder holds them to: a map has one encoding.
func appendMap(b []byte, v reflect.Value) ([]byte, error) {
	type entry struct{ k, e []byte }
	var entries []entry
	for it := v.MapRange(); it.Next(); {
		k, err := appendValue(nil, it.Key())
		if err != nil {
			return nil, err
		}
		e, err := appendValue(nil, it.Value())
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, e})
	}
	slices.SortFunc(entries, func(x, y entry) int { return bytes.Compare(x.k, y.k) })
	for _, x := range entries {
		b = append(append(b, x.k...), x.e...)
	}
	return b, nil
}

func appendElems(b []byte, v reflect.Value) ([]byte, error) {
	var err error
	for i := range v.Len() {
		if b, err = appendValue(b, v.Index(i)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decoder reads values from b; the first error stops it.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("message cut short")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// errLongVarint is a varint with a needless zero group at its end: one
// value has one encoding, so that a message re-encodes to its bytes.
var errLongVarint = errors.New("a varint longer than its value")

func (d *decoder) uvarint() uint64 {
	u, n := binary.Uvarint(d.b)
	switch {
	case n <= 0:
		d.fail(errShort)
		return 0
	case n > 1 && d.b[n-1] == 0:
		d.fail(errLongVarint)
		return 0
	}
	d.b = d.b[n:]
	return u
}

func (d *decoder) varint() int64 {
	i, n := binary.Varint(d.b)
	switch {
	case n <= 0:
		d.fail(errShort)
		return 0
	case n > 1 && d.b[n-1] == 0:
		d.fail(errLongVarint)
		return 0
	}
	d.b = d.b[n:]
	return i
}

// length reads a length that must fit in what is left: every element of a
// message takes at least one byte.
func (d *decoder) length(u uint64) int {
	if u > uint64(len(d.b)) {
		d.fail(errShort)
		return 0
	}
	return int(u)
}

func (d *decoder) bytes(n int) []byte {
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// nilOrLen reads a slice's or map's header: nil, or its length.
func (d *decoder) nilOrLen() (int, bool) {
	u := d.uvarint()
	if u == 0 || d.err != nil {
		return 0, false
	}
	return d.length(u - 1), d.err == nil
}

func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		switch d.byte() {
		case 0:
			v.SetBool(false)
		case 1:
			v.SetBool(true)
		default:
			d.fail(errors.New("bad boolean"))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := d.varint()
		if v.OverflowInt(i) {
			d.fail(fmt.Errorf("%d overflows %s", i, v.Type()))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := d.uvarint()
		if v.OverflowUint(u) {
			d.fail(fmt.Errorf("%d overflows %s", u, v.Type()))
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		if len(d.b) < 8 {
			d.fail(errShort)
			return
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(d.bytes(8))))
	case reflect.String:
		n := d.length(d.uvarint())
		if d.err == nil {
			v.SetString(string(d.bytes(n)))
		}
	case reflect.Pointer:
		switch d.byte() {
		case 0:
			v.SetZero()
		case 1:
			p := reflect.New(v.Type().Elem())
			d.value(p.Elem())
			v.Set(p)
		default:
			d.fail(errors.New("bad pointer"))
		}
	case reflect.Slice:
		d.slice(v)
	case reflect.Array:
		for i := range v.Len() {
			d.value(v.Index(i))
		}
	case reflect.Map:
		d.mapValue(v)
	case reflect.Struct:
		f := formOf(v.Type())
		switch {
		case f.err != nil:
			d.fail(f.err)
		case f.binary:
			n := d.length(d.uvarint())
			if d.err != nil {
				return
			}
			if err := v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(d.bytes(n)); err != nil {
				d.fail(fmt.Errorf("%s: %w", v.Type(), err))
			}
		default:
			for _, i := range f.fields {
				d.value(v.Field(i))
			}
		}
	default:
		d.fail(fmt.Errorf("%s has no wire form", v.Type()))
	}
}

func (d *decoder) slice(v reflect.Value) {
	n, ok := d.nilOrLen()
	if !ok {
		v.SetZero()
		return
	}
	if v.Type().Elem().Kind() == reflect.Uint8 {
		s := reflect.MakeSlice(v.Type(), n, n)
		copy(s.Bytes(), d.bytes(n))
		v.Set(s)
		return
	}
	s := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		d.value(s.Index(i))
	}
	v.Set(s)
}

func (d *decoder) mapValue(v reflect.Value) {
	n, ok := d.nilOrLen()
	if !ok {
		v.SetZero()
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), n)
	k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
	var prev []byte
	for i := range n {
		k.SetZero()
		e.SetZero()
		at := d.b
		d.value(k)
		key := at[:len(at)-len(d.b)]
		if d.err == nil && i > 0 && bytes.Compare(prev, key) >= 0 {
			d.fail(errors.New("map keys out of order or repeated"))
		}
		prev = key
		d.value(e)
		if d.err != nil {
			return
		}
		m.SetMapIndex(k, e)
	}
	v.Set(m)
}
