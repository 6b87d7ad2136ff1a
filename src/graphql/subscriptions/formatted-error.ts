// Errors a subscription transport sends as they are: already in the service's shape (message and
// extensions.code), because graphql-ws passes a GraphQLError's toJSON() to the client and
// graphql-sse's answers are written by us. The refusals both transports share are made here.
import { GraphQLError, type GraphQLFormattedError } from 'graphql'
import { REVOKED_MESSAGE } from './connection-rights.js'

/** An error already in the service's shape, sent as it is by graphql-ws. */
export class FormattedError extends GraphQLError {
  constructor(readonly formatted: GraphQLFormattedError) {
    super(formatted.message)
  }

  override toJSON(): GraphQLFormattedError {
    return this.formatted
  }
}

export const badRequest = (message: string) => new FormattedError({ message, extensions: { code: 'BAD_REQUEST' } })
export const revokedError = () => new FormattedError({ message: REVOKED_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } })
