'use strict';
// Channel values are opaque bytes to the Link protocol; Attach.value_type names their encoding
// (docs/SERIALIZATION.md). These are the encodings JavaScript can produce exactly.

const utf8 = new TextDecoder('utf-8', { fatal: true }); // invalid UTF-8 is malformed, never U+FFFD

class MalformedValueError extends Error {}

function presence(bytes, wireName) {
  if (bytes.length === 0 || bytes[0] > 1 || (bytes[0] === 0 && bytes.length > 1)) {
    throw new MalformedValueError(`Invalid '${wireName}' value: bad presence byte or bytes after null.`);
  }
  return bytes[0] === 1;
}

function fixed(bytes, size, wireName) {
  if (bytes.length !== size) {
    throw new MalformedValueError(`Invalid '${wireName}' value: it has ${bytes.length} byte(s); the encoding is exactly ${size}.`);
  }
}

function integer(text, min, max, wireName) {
  if (!/^-?\d+$/.test(text)) {
    throw new RangeError(`'${text}' is not an integer, which a '${wireName}' channel carries.`);
  }
  const value = BigInt(text);
  if (value < min || value > max) {
    throw new RangeError(`${text} is outside the range of '${wireName}' (${min} to ${max}).`);
  }
  return value;
}

// Each codec: parse (command-line text -> value), encode (value -> Buffer), decode (Buffer ->
// value), show (value -> one line of JSON).
const codecs = {
  string: {
    parse: (text) => text,
    encode: (value) => (value === null
      ? Buffer.from([0])
      : Buffer.concat([Buffer.from([1]), Buffer.from(value, 'utf8')])),
    decode: (bytes) => (presence(bytes, 'string') ? utf8.decode(bytes.subarray(1)) : null),
    show: (value) => JSON.stringify(value),
  },
  int32: {
    parse: (text) => Number(integer(text, -(2n ** 31n), 2n ** 31n - 1n, 'int32')),
    encode: (value) => { const b = Buffer.alloc(4); b.writeInt32LE(value); return b; },
    decode: (bytes) => { fixed(bytes, 4, 'int32'); return bytes.readInt32LE(0); },
    show: (value) => String(value),
  },
  int64: {
    parse: (text) => integer(text, -(2n ** 63n), 2n ** 63n - 1n, 'int64'),
    encode: (value) => { const b = Buffer.alloc(8); b.writeBigInt64LE(value); return b; },
    decode: (bytes) => { fixed(bytes, 8, 'int64'); return bytes.readBigInt64LE(0); },
    show: (value) => value.toString(),
  },
  bool: {
    parse: (text) => {
      if (text !== 'true' && text !== 'false') {
        throw new RangeError(`'${text}' is not true or false, which a 'bool' channel carries.`);
      }
      return text === 'true';
    },
    encode: (value) => Buffer.from([value ? 1 : 0]),
    decode: (bytes) => {
      fixed(bytes, 1, 'bool');
      if (bytes[0] > 1) {
        throw new MalformedValueError(`Invalid 'bool' value: byte ${bytes[0]} is neither 0 nor 1.`);
      }
      return bytes[0] === 1;
    },
    show: (value) => String(value),
  },
  double: {
    parse: (text) => {
      const value = Number(text);
      if (text.trim() === '' || (Number.isNaN(value) && text !== 'NaN')) {
        throw new RangeError(`'${text}' is not a number, which a 'double' channel carries.`);
      }
      return value;
    },
    encode: (value) => { const b = Buffer.alloc(8); b.writeDoubleLE(value); return b; },
    decode: (bytes) => { fixed(bytes, 8, 'double'); return bytes.readDoubleLE(0); },
    show: (value) => (Number.isFinite(value) ? String(value) : JSON.stringify(String(value))),
  },
};

function codecFor(wireName) {
  const codec = codecs[wireName];
  if (!codec) {
    throw new RangeError(`This client cannot encode '${wireName}' values; it knows ${Object.keys(codecs).join(', ')} (docs/SERIALIZATION.md defines the rest).`);
  }
  return codec;
}

module.exports = { codecFor, wireNames: Object.keys(codecs), MalformedValueError };
