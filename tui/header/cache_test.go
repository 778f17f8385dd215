package header

import (
	"reflect"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/alerts"
)

func fullInfo() Info {
	return Info{Title: "ttftop", Alerts: alerts.Counts{Firing: 1, Pending: 2, Unknown: 3, NoData: 4, Resolved: 5},
		Sources: []telemetry.SourceStatus{{Name: "probe h", Kind: telemetry.SourceProbe, URL: "http://h", State: telemetry.Live,
			Err: "e", LastOK: time.Unix(1e9, 0), Failures: 1, Latency: time.Millisecond, Warnings: []string{"w"},
			Recognised: []string{"vllm:"}, Description: "d"}},
		Shown: 1, Total: 2, ModelsShown: 1, Models: 2, Down: 1, Gone: 1, Note: "n", Recording: "r", Viewers: 1,
		Replay: &Replay{Speed: 1, First: time.Unix(1e9, 0), Last: time.Unix(1e9+60, 0)}}
}

// The header's redraw key is made from its whole input: an unchanged
// Info draws nothing again, and a change to any field of it (a source's
// description or recognised families included, which the hand-listed key
// left out) draws the header again.
func TestCacheKeyIsTheWholeInfo(t *testing.T) {
	c := ctx()
	var cache Cache
	cache.View(c, fullInfo(), 120)
	cache.View(c, fullInfo(), 120)
	if n := cache.memo.Renders(); n != 1 {
		t.Fatalf("an unchanged header drawn %d times", n)
	}
	fields := 0
	eachLeaf(reflect.ValueOf(fullInfo()), "Info", func(path string, change func(reflect.Value)) {
		fields++
		in := fullInfo()
		change(reflect.ValueOf(&in).Elem())
		before := cache.memo.Renders()
		cache.View(c, in, 120)
		if cache.memo.Renders() == before {
			t.Errorf("%s changed, the header was not drawn again", path)
		}
		cache.View(c, fullInfo(), 120) // back to the base for the next field
	})
	if fields < 25 {
		t.Fatalf("walked %d fields of Info", fields)
	}
}

// eachLeaf calls visit for each leaf field under v with a function that
// changes that field in a copy of the same shape (the first element of a
// slice, the target of a pointer).
func eachLeaf(v reflect.Value, path string, visit func(path string, change func(reflect.Value))) {
	walk(v, path, func(root reflect.Value) reflect.Value { return root }, visit)
}

func walk(v reflect.Value, path string, at func(reflect.Value) reflect.Value, visit func(string, func(reflect.Value))) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		visit(path, func(root reflect.Value) {
			f := at(root)
			f.Set(reflect.ValueOf(f.Interface().(time.Time).Add(time.Second)))
		})
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			walk(v.Field(i), path+"."+name, func(root reflect.Value) reflect.Value { return at(root).Field(i) }, visit)
		}
	case reflect.Pointer:
		walk(v.Elem(), path, func(root reflect.Value) reflect.Value { return at(root).Elem() }, visit)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			walk(v.Index(0), path+"[0]", func(root reflect.Value) reflect.Value { return at(root).Index(0) }, visit)
			return
		}
		visit(path, func(root reflect.Value) {
			f := at(root)
			f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
		})
	default:
		visit(path, func(root reflect.Value) {
			f := at(root)
			switch f.Kind() {
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Int, reflect.Int64:
				f.SetInt(f.Int() + 1)
			case reflect.Uint8:
				f.SetUint(f.Uint() + 1)
			case reflect.Float64:
				f.SetFloat(f.Float() + 0.5)
			case reflect.String:
				f.SetString(f.String() + "x")
			default:
				panic("eachLeaf: add " + f.Kind().String())
			}
		})
	}
}
