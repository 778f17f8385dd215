package common

import (
	"cmp"
	"reflect"
	"slices"
	"time"
)

// Value adds every field of v, however deep: a pane's redraw key is made
// from its whole input, so a field added to that input redraws the pane
// without a list of fields to keep up to date (as the refresh's
// fingerprint in tui/fetch.go). Unexported fields count too; floats are
// bit-exact (NaN is a value); map entries are taken in key order; a time
// counts by its instant; a func or channel counts only as set or not.
func (h *Hash) Value(v any) { h.value(reflect.ValueOf(v), 0) }

// maxDepth bounds the walk: pane inputs are trees a few levels deep, and
// a cycle through pointers must not loop.
const maxDepth = 32

var timeType = reflect.TypeFor[time.Time]()

func (h *Hash) value(v reflect.Value, depth int) {
	if !v.IsValid() || depth > maxDepth {
		h.byte(0)
		return
	}
	if v.Type() == timeType {
		if v.CanInterface() {
			h.Time(v.Interface().(time.Time))
		} else { // an unexported field: its clock readings, not its zone's caches
			h.U64(v.FieldByName("wall").Uint())
			h.U64(uint64(v.FieldByName("ext").Int()))
		}
		return
	}
	h.Int(int(v.Kind()))
	switch v.Kind() {
	case reflect.Bool:
		h.Bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.U64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.U64(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.F64(v.Float())
	case reflect.Complex64, reflect.Complex128:
		h.F64(real(v.Complex()))
		h.F64(imag(v.Complex()))
	case reflect.String:
		h.Str(v.String())
	case reflect.Slice, reflect.Array:
		h.Int(v.Len())
		for i := range v.Len() {
			h.value(v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			h.value(v.Field(i), depth+1)
		}
	case reflect.Pointer, reflect.Interface:
		h.Bool(v.IsNil())
		if !v.IsNil() {
			h.value(v.Elem(), depth+1)
		}
	case reflect.Map:
		h.Int(v.Len())
		keys := v.MapKeys()
		slices.SortFunc(keys, compareKeys)
		for _, k := range keys {
			h.value(k, depth+1)
			h.value(v.MapIndex(k), depth+1)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		h.Bool(v.IsNil())
	}
}

// compareKeys orders map keys of the kinds maps are keyed by here
// (strings, numbers, bools); others keep the order they came in.
func compareKeys(a, b reflect.Value) int {
	switch a.Kind() {
	case reflect.String:
		return cmp.Compare(a.String(), b.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp.Compare(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp.Compare(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmp.Compare(a.Float(), b.Float())
	case reflect.Bool:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
