// One way from a thrown value to what a client sees, for every transport: an AppError as it is, an
// expected database error in our words, anything else masked as INTERNAL_ERROR with one message
// that quotes the request id, its detail only in the log.
import { describe, expect, it } from 'vitest'
import { maskedMessage, toAppError } from '../../src/http/to-app-error.js'
import { AppError, ERROR_CATALOGUE, ERROR_STATUS } from '../../src/errors.js'

function recordingScope(id = 'req-42') {
  const lines: { level: 'warn' | 'error'; fields: object; message: string }[] = []
  return {
    lines,
    scope: {
      id,
      log: {
        warn: (fields: object, message: string) => void lines.push({ level: 'warn', fields, message }),
        error: (fields: object, message: string) => void lines.push({ level: 'error', fields, message }),
      },
    },
  }
}

describe('toAppError', () => {
  it('returns an AppError as it is, and logs nothing for it', () => {
    const { scope, lines } = recordingScope()
    const refusal = new AppError('FORBIDDEN', 'Only an admin may do this')
    expect(toAppError(refusal, scope)).toBe(refusal)
    expect(lines).toEqual([])
  })

  it('masks anything else as INTERNAL_ERROR with one message quoting the request id, whatever was thrown', () => {
    for (const thrown of [new TypeError('Cannot read properties of undefined (reading secret)'), 'a string', undefined, { code: 'XX000' }]) {
      const { scope, lines } = recordingScope('req-42')
      const masked = toAppError(thrown, scope, { path: ['user', 'age'] })
      expect(masked).toMatchObject({ code: 'INTERNAL_ERROR', status: 500, message: 'Something went wrong on our side; quote request id req-42' })
      expect(masked.message).toBe(maskedMessage('req-42'))
      expect(masked.details).toBeUndefined()
      expect(lines).toEqual([{ level: 'error', fields: { path: ['user', 'age'], err: thrown }, message: 'unexpected error' }])
    }
  })

  it("puts a database error the service expects in its words (the database's own error kept as the cause), logged as a warning", () => {
    const { scope, lines } = recordingScope()
    const refused = Object.assign(new Error('FOREIGN KEY constraint failed'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' })
    const translated = toAppError(refused, scope)
    expect(translated).toMatchObject({ code: 'NOT_FOUND', message: 'What this write refers to no longer exists', cause: refused })
    expect(lines).toEqual([{ level: 'warn', fields: { err: refused }, message: 'What this write refers to no longer exists' }])
  })

  it('shows an AppError that translated a failure underneath, and logs that failure as a warning', () => {
    const { scope, lines } = recordingScope()
    const cause = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
    const busy = new AppError('SERVICE_UNAVAILABLE', 'The database is busy; retry in a moment', undefined, { cause })
    expect(toAppError(busy, scope)).toBe(busy)
    expect(lines).toEqual([{ level: 'warn', fields: { err: cause }, message: 'The database is busy; retry in a moment' }])
  })
})

describe('the error catalogue', () => {
  it('gives every code a status, a title and a description, and ERROR_STATUS reads the statuses from it', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(entry.status)
      expect(entry.title).toMatch(/^[A-Z][a-z]+( [A-Z][a-z]+)*$/)
      expect(entry.description).toContain(`\`${code}\``)
    }
    expect(new Set(Object.values(ERROR_STATUS)).size).toBe(Object.keys(ERROR_STATUS).length)
  })
})
