"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Button } from "../ui/button";
import { ActionError } from "./action-error";
import { useAdminAction, type ActionFailure, type AdminAction } from "./use-admin-action";

/**
 * A destructive admin action on one row (revoke a key or a licence, disable a user, change a
 * role): a row's button asks for it, a dialog confirms it. The target is what the dialog is about;
 * the dialog may let the admin adjust it (a new role) before confirming.
 */
export function useConfirmedAction<Target, I, T>(action: AdminAction<I, T>): ConfirmedAction<Target, I, T> {
  const [target, setTarget] = useState<Target | null>(null);
  const mutation = useAdminAction(action, () => setTarget(null));
  return {
    target,
    ask: (next) => {
      mutation.reset();
      setTarget(next);
    },
    update: setTarget,
    close: () => setTarget(null),
    confirm: (input) => mutation.mutate(input),
    pending: mutation.isPending,
    failure: mutation.failure,
    done: mutation.result !== undefined && !mutation.isPending ? mutation.result : undefined,
  };
}

export type ConfirmedAction<Target, I, T> = {
  /** What the open dialog is about; null while it is closed. */
  target: Target | null;
  /** Opens the dialog for this target, forgetting the previous attempt's outcome. */
  ask: (target: Target) => void;
  update: (target: Target) => void;
  close: () => void;
  confirm: (input: I) => void;
  pending: boolean;
  failure: ActionFailure | null;
  /** The latest success, once nothing is pending: for the table's confirmation message. */
  done: T | undefined;
};

/** The row's button that opens the confirmation; its accessible name says which row. */
export function ConfirmTrigger<Target>({
  control,
  target,
  label,
  name,
}: {
  control: { ask: (target: Target) => void };
  target: Target;
  label: string;
  name: string;
}) {
  return (
    <Button variant="secondary" size="sm" onClick={() => control.ask(target)} aria-label={name}>
      {label}
    </Button>
  );
}

/**
 * The confirmation as a modal <dialog>: the browser traps focus inside it and Escape cancels.
 * Focus starts on Cancel, so a stray Enter never confirms a destructive action. A failure is
 * shown inside the dialog, which stays open for another try.
 */
export function ConfirmDialog<Target, I, T>({
  control,
  title,
  confirmLabel,
  pendingLabel,
  failureTitle,
  input,
  children,
}: {
  control: ConfirmedAction<Target, I, T>;
  title: string;
  confirmLabel: string;
  pendingLabel: string;
  failureTitle: string;
  /** What the action is sent for the target. */
  input: (target: Target) => I;
  /** What confirming will do to the target. */
  children: (target: Target) => ReactNode;
}) {
  const { target, pending, failure, close } = control;
  const open = target !== null;
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) {
      el.showModal();
      el.querySelector<HTMLButtonElement>("[data-cancel]")?.focus();
    } else if (!open && el.open) el.close();
  }, [open]);
  return (
    <dialog
      ref={dialog}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!pending) close();
      }}
      className="m-auto w-[calc(100%-2rem)] max-w-md rounded-lg bg-white p-0 shadow-xl ring-1 ring-slate-200 backdrop:bg-slate-900/40"
    >
      <div className="px-5 pt-5">
        <h2 id={titleId} className="text-base font-semibold text-slate-900">
          {title}
        </h2>
        {target !== null ? (
          <div className="mt-2 space-y-3 text-sm text-slate-600">
            {children(target)}
            {failure ? <ActionError title={failureTitle} failure={failure} /> : null}
          </div>
        ) : null}
      </div>
      <div className="mt-5 flex flex-col-reverse gap-2 border-t border-slate-100 bg-slate-50 px-5 py-3 sm:flex-row sm:justify-end">
        <Button data-cancel variant="secondary" onClick={close} disabled={pending}>
          Cancel
        </Button>
        <Button
          variant="danger"
          onClick={() => target !== null && control.confirm(input(target))}
          disabled={pending}
          aria-busy={pending || undefined}
        >
          {pending ? pendingLabel : confirmLabel}
        </Button>
      </div>
    </dialog>
  );
}
