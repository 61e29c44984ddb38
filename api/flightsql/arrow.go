package flightsql

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var tsUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

var hugeint = &arrow.Decimal128Type{Precision: 38, Scale: 0}

// deref follows pointers (ClickHouse scans Nullable(T) into *T).
func deref(v any) any {
	for v != nil {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Pointer {
			return v
		}
		if rv.IsNil() {
			return nil
		}
		if _, ok := v.(*big.Int); ok {
			return v
		}
		v = rv.Elem().Interface()
	}
	return nil
}

// typeOf is the Arrow type of a Go value (see the package comment).
func typeOf(v any) arrow.DataType {
	switch v.(type) {
	case string:
		return arrow.BinaryTypes.String
	case []byte:
		return arrow.BinaryTypes.Binary
	case bool:
		return arrow.FixedWidthTypes.Boolean
	case int8:
		return arrow.PrimitiveTypes.Int8
	case int16:
		return arrow.PrimitiveTypes.Int16
	case int32:
		return arrow.PrimitiveTypes.Int32
	case int64, int:
		return arrow.PrimitiveTypes.Int64
	case uint8:
		return arrow.PrimitiveTypes.Uint8
	case uint16:
		return arrow.PrimitiveTypes.Uint16
	case uint32:
		return arrow.PrimitiveTypes.Uint32
	case uint64, uint:
		return arrow.PrimitiveTypes.Uint64
	case float32:
		return arrow.PrimitiveTypes.Float32
	case float64:
		return arrow.PrimitiveTypes.Float64
	case time.Time:
		return tsUTC
	case *big.Int:
		return hugeint
	}
	return arrow.BinaryTypes.String // JSON text
}

// Encode builds the Arrow schema from the rows' values and cuts the rows
// into record batches of at most batch rows (at least one, possibly
// empty, so the schema always travels).
func Encode(mem memory.Allocator, cols []string, rows [][]any, batch int) (*arrow.Schema, []arrow.RecordBatch, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c, Type: arrow.Null, Nullable: true}
		for _, r := range rows {
			if v := deref(r[i]); v != nil {
				fields[i].Type = typeOf(v)
				break
			}
		}
	}
	schema := arrow.NewSchema(fields, nil)
	var out []arrow.RecordBatch
	for start := 0; start == 0 || start < len(rows); start += batch {
		end := min(start+batch, len(rows))
		b := array.NewRecordBuilder(mem, schema)
		for i := range cols {
			if err := appendColumn(b.Field(i), fields[i].Type, rows[start:end], i); err != nil {
				b.Release()
				for _, r := range out {
					r.Release()
				}
				return nil, nil, fmt.Errorf("column %s: %w", cols[i], err)
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
		if end == len(rows) {
			break
		}
	}
	return schema, out, nil
}

func appendColumn(fb array.Builder, t arrow.DataType, rows [][]any, col int) error {
	for _, r := range rows {
		v := deref(r[col])
		if v == nil {
			fb.AppendNull()
			continue
		}
		if t.ID() != arrow.STRING && t.ID() != arrow.NULL && !sameType(typeOf(v), t) {
			return fmt.Errorf("mixed types in one column: %T in a %s column", v, t)
		}
		switch b := fb.(type) {
		case *array.NullBuilder:
			b.AppendNull()
		case *array.StringBuilder:
			if s, ok := v.(string); ok {
				b.Append(s)
			} else {
				j, err := json.Marshal(v)
				if err != nil {
					j = []byte(fmt.Sprint(v))
				}
				b.Append(string(j))
			}
		case *array.BinaryBuilder:
			b.Append(v.([]byte))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.Int8Builder:
			b.Append(v.(int8))
		case *array.Int16Builder:
			b.Append(v.(int16))
		case *array.Int32Builder:
			b.Append(v.(int32))
		case *array.Int64Builder:
			switch x := v.(type) {
			case int:
				b.Append(int64(x))
			default:
				b.Append(x.(int64))
			}
		case *array.Uint8Builder:
			b.Append(v.(uint8))
		case *array.Uint16Builder:
			b.Append(v.(uint16))
		case *array.Uint32Builder:
			b.Append(v.(uint32))
		case *array.Uint64Builder:
			switch x := v.(type) {
			case uint:
				b.Append(uint64(x))
			default:
				b.Append(x.(uint64))
			}
		case *array.Float32Builder:
			b.Append(v.(float32))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v.(time.Time).UTC().UnixMicro()))
		case *array.Decimal128Builder:
			n := v.(*big.Int)
			if n.BitLen() > 126 {
				return fmt.Errorf("%s does not fit decimal128(38, 0)", n)
			}
			b.Append(decimal128.FromBigInt(n))
		default:
			return fmt.Errorf("no builder for %s", fb.Type())
		}
	}
	return nil
}

func sameType(a, b arrow.DataType) bool { return arrow.TypeEqual(a, b) }

// Decode turns record batches back into rows of Go values, the inverse of
// Encode for its types: what `forum sql` prints from a Flight SQL server is
// what it prints from the store.
func Decode(schema *arrow.Schema, recs []arrow.RecordBatch) (cols []string, rows [][]any, err error) {
	for _, f := range schema.Fields() {
		cols = append(cols, f.Name)
	}
	for _, rec := range recs {
		n := int(rec.NumRows())
		base := len(rows)
		for i := 0; i < n; i++ {
			rows = append(rows, make([]any, len(cols)))
		}
		for c := range cols {
			col := rec.Column(c)
			if col.DataType().ID() == arrow.NULL {
				continue // every value NULL
			}
			for i := 0; i < n; i++ {
				if col.IsNull(i) {
					continue
				}
				var v any
				switch a := col.(type) {
				case *array.String:
					v = a.Value(i)
				case *array.LargeString:
					v = a.Value(i)
				case *array.Binary:
					v = append([]byte(nil), a.Value(i)...)
				case *array.Boolean:
					v = a.Value(i)
				case *array.Int8:
					v = a.Value(i)
				case *array.Int16:
					v = a.Value(i)
				case *array.Int32:
					v = a.Value(i)
				case *array.Int64:
					v = a.Value(i)
				case *array.Uint8:
					v = a.Value(i)
				case *array.Uint16:
					v = a.Value(i)
				case *array.Uint32:
					v = a.Value(i)
				case *array.Uint64:
					v = a.Value(i)
				case *array.Float32:
					v = a.Value(i)
				case *array.Float64:
					v = a.Value(i)
				case *array.Timestamp:
					unit := a.DataType().(*arrow.TimestampType).Unit
					v = a.Value(i).ToTime(unit).UTC()
				case *array.Date32:
					v = a.Value(i).ToTime().UTC()
				case *array.Decimal128:
					dt := a.DataType().(*arrow.Decimal128Type)
					if dt.Scale == 0 {
						v = a.Value(i).BigInt()
					} else {
						v = a.Value(i).ToFloat64(dt.Scale)
					}
				default:
					v = col.ValueStr(i)
				}
				rows[base+i][c] = v
			}
		}
	}
	return cols, rows, nil
}
