// What other features may use of comments: the item schema and the service's type. The lint
// refuses other features' imports of anything else in this folder.
export { Comment } from './comments.schemas.js'
export type { CommentsService } from './comments.service.js'
