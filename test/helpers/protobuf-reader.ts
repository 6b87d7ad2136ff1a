// Protocol Buffers' wire format, read field by field (enough to decode an OTLP export in a test):
// each field's number, and its value as a varint, or as bytes (length-delimited, and the 8 or 4
// bytes of fixed-width numbers). Nested messages are read by calling fieldsOf on their bytes.

export interface ProtobufField {
  number: number
  /** Wire type 0. */
  varint?: bigint
  /** Wire types 2 (length-delimited), 1 (64-bit) and 5 (32-bit). */
  bytes?: Buffer
}

export function fieldsOf(buffer: Buffer): ProtobufField[] {
  const fields: ProtobufField[] = []
  let at = 0
  const varint = (): bigint => {
    let value = 0n
    for (let shift = 0n; ; shift += 7n) {
      const byte = buffer[at++]
      if (byte === undefined) throw new Error('protobuf: a varint runs past the end')
      value |= BigInt(byte & 0x7f) << shift
      if (byte < 0x80) return value
    }
  }
  const take = (length: number): Buffer => {
    if (at + length > buffer.length) throw new Error('protobuf: a field runs past the end')
    const bytes = buffer.subarray(at, at + length)
    at += length
    return bytes
  }
  while (at < buffer.length) {
    const key = Number(varint())
    const number = key >>> 3
    const wire = key & 7
    if (wire === 0) fields.push({ number, varint: varint() })
    else if (wire === 1) fields.push({ number, bytes: take(8) })
    else if (wire === 2) fields.push({ number, bytes: take(Number(varint())) })
    else if (wire === 5) fields.push({ number, bytes: take(4) })
    else throw new Error(`protobuf: wire type ${wire} is not read here`)
  }
  return fields
}
