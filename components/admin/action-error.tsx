import { Alert } from "../ui/alert";
import type { ActionFailure } from "./use-admin-action";

/** An action's error as the portal shows every error: the message, and the request id to quote. */
export function ActionError({
  title,
  failure,
  className,
}: {
  title: string;
  failure: ActionFailure;
  className?: string;
}) {
  return (
    <Alert kind="error" title={title} className={className}>
      {failure.message}
      {failure.request_id ? (
        <span className="mt-1 block text-xs opacity-75">
          Request id <span className="font-mono">{failure.request_id}</span>
        </span>
      ) : null}
    </Alert>
  );
}
