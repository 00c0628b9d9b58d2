package wire

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Test payloads are built as trees of these values and encoded with
// msgpack/v5's low-level encoder, independently of the decoder under test.
type (
	arr  []any // msgpack array
	obj  []any // msgpack map as alternating key, value (keeps key order)
	f32  float32
	i64  int64 // forces a signed encoding even for non-negative values
	u64w uint64
)

func pack(v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := encodeTree(enc, v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func encodeTree(enc *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case nil:
		return enc.EncodeNil()
	case arr:
		if err := enc.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		return encodeAll(enc, x)
	case obj:
		if err := enc.EncodeMapLen(len(x) / 2); err != nil {
			return err
		}
		return encodeAll(enc, x)
	case string:
		return enc.EncodeString(x)
	case []byte:
		return enc.EncodeBytes(x)
	case int:
		return enc.EncodeInt(int64(x))
	case i64:
		return enc.EncodeInt64(int64(x))
	case uint64:
		return enc.EncodeUint(x)
	case u64w:
		return enc.EncodeUint64(uint64(x))
	case float64:
		return enc.EncodeFloat64(x)
	case f32:
		return enc.EncodeFloat32(float32(x))
	case bool:
		return enc.EncodeBool(x)
	}
	return fmt.Errorf("encodeTree: unsupported %T", v)
}

func encodeAll(enc *msgpack.Encoder, xs []any) error {
	for _, x := range xs {
		if err := encodeTree(enc, x); err != nil {
			return err
		}
	}
	return nil
}

// tokens returns n token ids starting at from.
func tokens(from, n int) arr {
	out := make(arr, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// storedMap is a vLLM >= 0.24 BlockStored event in map form.
func storedMap(hashes arr, parent any, toks arr, blockSize int, extra ...any) obj {
	o := obj{"type", "BlockStored", "block_hashes", hashes, "parent_block_hash", parent,
		"token_ids", toks, "block_size", blockSize, "lora_id", nil, "medium", "GPU", "lora_name", nil}
	return append(o, extra...)
}

// vllmBatch is vLLM's array-like EventBatch.
func vllmBatch(events ...any) arr { return arr{1700000000.5, arr(events), 0} }
