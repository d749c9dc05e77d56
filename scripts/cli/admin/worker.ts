// das-admin worker: the job queue worked in this process (notice deliveries, licences' copies).
import type { CliCommand } from "../program";
import { say } from "../terminal";
import { onDatabase, verbs } from "./session";

export function addWorkerCommand(program: CliCommand): void {
  program
    .command("worker")
    .summary("deliver queued notices and make licences' copies until stopped")
    .description(
      "Work the job queue in this process until interrupted (SIGINT or SIGTERM), finishing the work in flight: notice deliveries (webhooks, email), the hourly schedule of licence-end warnings and reminders of withdrawal notices not acknowledged, and the licences' copies of fingerprinted versions. Every server started with npm start already runs both workers unless NOTICE_WORKER=off or COPY_WORKER=off: run this where the servers do not.",
    )
    .examples("NOTICE_WORKER=off COPY_WORKER=off npm start   # and elsewhere: das-admin worker")
    .action(
      onDatabase(async ({ ctx, runtime }) => {
        const url = runtime.env.DATABASE_URL!;
        const workers = [
          await verbs.startNoticeWorker({ url, db: ctx.db }),
          await verbs.startCopyWorker({ url, db: ctx.db }),
        ];
        say("Delivering notices and making licences' copies; press Ctrl-C to stop.");
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        say("Stopping: finishing the work in flight.");
        await Promise.all(workers.map((w) => w.stop()));
      }),
    );
}
