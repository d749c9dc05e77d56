import type { ReplicaLag } from "@/lib/db/replica";
import { Alert } from "@/components/ui/alert";
import { formatSeconds } from "@/components/ui/format";

/** "as of" to the second (UTC): a replica is seconds behind, not minutes. */
const toSecond = (at: Date) => `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;

/**
 * What a page read from the read replica says about when: the log as the primary held it at
 * `asOf`. Nothing when the page read the primary (`lag` null).
 */
export function ReplicaNotice({ lag }: { lag: ReplicaLag | null }) {
  if (!lag) return null;
  const when =
    lag.asOf === null
      ? "as of a moment it cannot tell"
      : `as of ${toSecond(lag.asOf)} (${formatSeconds((lag.behindMs ?? 0) / 1000)} behind the primary)`;
  // One text node, so that the sentence reads (and is searched) whole.
  return lag.receiving ? (
    <p className="mb-3 text-xs text-slate-500" data-testid="replica-as-of">
      {`Read from a replica: the log ${when}.`}
    </p>
  ) : (
    <Alert kind="warning" title="The replica is not receiving from the primary" className="mb-4">
      <span data-testid="replica-as-of">{`Read from a replica: the log ${when}; newer entries are not shown.`}</span>
    </Alert>
  );
}
