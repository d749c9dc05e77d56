import type { AccessRequestStatus } from "@/lib/db/schema/access-requests";
import { Badge, type Tone } from "../ui/badge";

const TONES: Record<AccessRequestStatus, Tone> = { pending: "amber", approved: "green", rejected: "red" };

/** An access request's status as a badge, the same on the requester's page and the admin's queue. */
export function RequestStatus({ status }: { status: AccessRequestStatus }) {
  return <Badge tone={TONES[status]}>{status}</Badge>;
}
