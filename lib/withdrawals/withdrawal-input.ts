import { z } from "zod";
import { AppError } from "../errors";
import { FREE_TEXT, WITHOUT_CONTROL_CHARACTERS } from "../characters";
import { DATASET_ID_PATTERN, EPISODE_ID_PATTERN } from "../catalog/identifiers";

// What a withdrawal takes, written once: `das-admin withdraw`, the portal's form (in the browser)
// and its server actions parse it, and so does withdrawEpisodes itself, whoever calls it. Every
// message is a sentence that reads the same on the command line, in the form and in an answer.

/** The reason, kept with the withdrawal and in the admin audit (recipients are not shown it). */
export const WITHDRAWAL_REASON_MAX = 2_000;
/** Episodes named one by one in one withdrawal; a contributor's are found by the database, however many. */
export const MAX_NAMED_EPISODES = 10_000;
/** A contributor's name, as long as an episode's contributor may be. */
export const CONTRIBUTOR_MAX = 200;

const count = (n: number) => n.toLocaleString("en");
const unique = (ids: string[]) => [...new Set(ids)];

const reason = z
  .string()
  .trim()
  .min(1, "A withdrawal needs a reason: say why, for the record (recipients are not shown it).")
  .max(WITHDRAWAL_REASON_MAX, `A withdrawal's reason is at most ${count(WITHDRAWAL_REASON_MAX)} characters.`)
  .regex(FREE_TEXT, "A withdrawal's reason has no control characters other than line breaks.");

const contributor = z
  .string()
  .trim()
  .min(1, "Name the contributor as the dataset records them, e.g. operator-17.")
  .max(CONTRIBUTOR_MAX, `A contributor's name is at most ${CONTRIBUTOR_MAX} characters.`)
  .regex(WITHOUT_CONTROL_CHARACTERS, "A contributor's name has no control characters.");

const episodeIds = z
  .array(z.string())
  .transform(unique)
  .pipe(
    z
      .array(z.string())
      .min(1, "Name at least one episode to withdraw.")
      .max(MAX_NAMED_EPISODES, {
        error: (issue) =>
          `At most ${count(MAX_NAMED_EPISODES)} episodes can be named in one withdrawal (${count((issue.input as string[]).length)} given).`,
      })
      .superRefine((ids, check) => {
        const bad = ids.find((id) => !EPISODE_ID_PATTERN.test(id));
        if (bad !== undefined) check.addIssue({ code: "custom", message: `'${bad}' is not an episode id.` });
      }),
  );

const datasetId = z.string().superRefine((id, check) => {
  if (!DATASET_ID_PATTERN.test(id)) check.addIssue({ code: "custom", message: `'${id}' is not a dataset id.` });
});

/**
 * A withdrawal: a contributor's episodes (from every dataset), or named episodes (of one dataset
 * when `datasetId` is given; they are still withdrawn from every version that holds them), with
 * the reason on record. `expectedEpisodes` is the count an admin confirmed after a preview: the
 * withdrawal is refused if it would now take another.
 */
export const WithdrawalInput = z
  .object({
    contributor: contributor.optional(),
    episodeIds: episodeIds.optional(),
    datasetId: datasetId.optional(),
    reason,
    expectedEpisodes: z
      .number()
      .int("The confirmed number of episodes is a whole number.")
      .min(1, "The confirmed number of episodes is at least 1.")
      .optional(),
  })
  .superRefine((input, check) => {
    if ((input.contributor === undefined) === (input.episodeIds === undefined))
      check.addIssue({
        code: "custom",
        message: "Withdraw either a contributor's episodes or named episodes: one of the two.",
      });
    else if (input.datasetId !== undefined && input.episodeIds === undefined)
      check.addIssue({
        code: "custom",
        message: "A dataset narrows named episodes only: a contributor's are taken from every dataset.",
      });
  });

/** What a caller hands over: ids may repeat, text may carry white space at either end. */
export type WithdrawalInput = z.input<typeof WithdrawalInput>;
/** What the verb works with: ids once each, text trimmed. */
export type Withdrawal = z.output<typeof WithdrawalInput>;

export type WithdrawalProblem = {
  /** The field it is about (the portal's form shows it there), or null for the input as a whole. */
  field: keyof Withdrawal | null;
  message: string;
  /** A value of the wrong type, which only a hand-made request sends: named with its field, as zod says it. */
  malformed: boolean;
};

/** Every problem of a withdrawal's input, the first of each field; none when it is one. */
export function withdrawalProblems(input: unknown): WithdrawalProblem[] {
  const parsed = WithdrawalInput.safeParse(input);
  if (parsed.success) return [];
  const seen = new Set<string | null>();
  return parsed.error.issues.flatMap((issue) => {
    const field = (issue.path[0] as keyof Withdrawal | undefined) ?? null;
    if (seen.has(field)) return [];
    seen.add(field);
    const malformed = issue.code === "invalid_type";
    return [{ field, message: malformed && field ? `'${field}' ${issue.message}` : issue.message, malformed }];
  });
}

/** The withdrawal, or the first problem as the error the verbs throw: a broken rule is `invalid_parameter`, a malformed value `invalid_body`. */
export function parseWithdrawal(input: unknown): Withdrawal {
  const parsed = WithdrawalInput.safeParse(input);
  if (parsed.success) return parsed.data;
  const [problem] = withdrawalProblems(input);
  throw new AppError(problem!.malformed ? "invalid_body" : "invalid_parameter", problem!.message);
}
