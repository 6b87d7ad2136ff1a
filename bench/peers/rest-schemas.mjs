// The response schemas of the bare REST references (fastify-bare.mjs on SQLite, fastify-pg.mjs on
// PostgreSQL): Threadline's v1 envelope and fields, so that Fastify serializes as Threadline's
// routes do and the suite can check that every server answers the same rows.
const nullable = (type) => ({ type: [type, 'null'] })
const object = (properties) => ({ type: 'object', properties })

export const user = object({
  id: { type: 'integer' },
  name: { type: 'string' },
  email: { type: 'string' },
  age: nullable('integer'),
  avatar: nullable('string'),
  role: { type: 'string' },
  username: nullable('string'),
  phone: nullable('string'),
  website: nullable('string'),
  address: { type: ['object', 'null'], additionalProperties: true },
  company: { type: ['object', 'null'], additionalProperties: true },
  createdAt: { type: 'string' },
  updatedAt: { type: 'string' },
})

/** A user's profile columns, beside the others a peer reads. */
export const PROFILE_COLUMNS = 'username, phone, website, address, company'

/** A user row as the API shows it: its address and company are kept as JSON text. */
export const userOf = (row) =>
  row === undefined
    ? undefined
    : { ...row, address: row.address === null ? null : JSON.parse(row.address), company: row.company === null ? null : JSON.parse(row.company) }

export const post = object({
  id: { type: 'integer' },
  userId: { type: 'integer' },
  title: { type: 'string' },
  content: { type: 'string' },
  status: { type: 'string' },
  publishedAt: nullable('string'),
  createdAt: { type: 'string' },
  updatedAt: { type: 'string' },
})

const meta = object({ timestamp: { type: 'string' } })
const pagination = object({ page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, totalPages: { type: 'integer' } })

/** `{ data, meta }` of one resource. */
export const single = (data) => object({ data, meta })

/** `{ data: [...], meta: { timestamp, pagination } }` of a v1 page. */
export const page = (item) => object({ data: { type: 'array', items: item }, meta: object({ ...meta.properties, pagination }) })

export const notFound = (reply) => reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'no such user' } })
