// The account's messaging-provider connection: the endpoints the contract defines beside the specification.
import { router } from '../../server/trpc.ts';

export const messagingRouter = router({});
