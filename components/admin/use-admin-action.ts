"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import type { ActionResult } from "@/lib/http/portal";

export type ActionFailure = { code: string; message: string; request_id: string };

/**
 * A server action as the admin components receive it: from the page that renders them, so the
 * actions stay beside their routes and a component only states what it sends and gets back.
 */
export type AdminAction<I, T> = (input: I) => Promise<ActionResult<T>>;

/**
 * A server action of the admin pages as a react-query mutation: on success the page's server
 * data is refreshed (client state such as a just-issued secret survives the refresh); a failure
 * comes back as the action's error envelope, or as a network failure with no request id.
 */
export function useAdminAction<I, T>(action: AdminAction<I, T>, onSuccess?: (data: T, input: I) => void) {
  const router = useRouter();
  const mutation = useMutation({
    mutationFn: action,
    onSuccess: (result, input) => {
      if (!result.ok) return;
      onSuccess?.(result.data, input);
      router.refresh();
    },
  });
  const failure: ActionFailure | null =
    mutation.data && !mutation.data.ok
      ? mutation.data.error
      : mutation.error
        ? {
            code: "unavailable",
            message: "The server could not be reached. Check your connection and try again.",
            request_id: "",
          }
        : null;
  return { ...mutation, failure, result: mutation.data?.ok ? mutation.data.data : undefined };
}
