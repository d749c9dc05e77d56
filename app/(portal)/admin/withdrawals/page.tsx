import type { Metadata } from "next";
import Link from "next/link";
import { WithdrawForm } from "@/components/admin/withdraw-form";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { PageHeader } from "@/components/ui/page-header";
import { listDatasetListings } from "@/lib/admin/listing";
import { pageContext, pageData } from "@/lib/http/portal";
import { previewWithdrawalAction, withdrawAction } from "./actions";

export const metadata: Metadata = { title: "Withdraw episodes" };

/** Withdrawal from the portal: the same verb as das-admin withdraw, previewed before it is committed. */
export default async function WithdrawPage() {
  const ctx = await pageContext("admin", "/admin/withdrawals");
  const datasets = await pageData(listDatasetListings(ctx));
  return (
    <>
      <PageHeader
        title="Withdraw episodes"
        description="When a contributor withdraws consent, or an episode holds what it must not: take the episodes out of every version that holds them and tell every organisation that received them. Audited, like das-admin withdraw."
      />
      <div className="space-y-6">
        <Card>
          <CardHeader
            title="New withdrawal"
            description="Review shows how many episodes, which versions and how many organisations before anything is written."
          />
          <CardBody>
            <WithdrawForm
              datasets={datasets.map(({ dataset_id, title }) => ({ dataset_id, title }))}
              preview={previewWithdrawalAction}
              withdraw={withdrawAction}
            />
          </CardBody>
        </Card>
        <p className="text-sm text-slate-600">
          Earlier withdrawals, who was notified and who acknowledged:{" "}
          <Link className="font-medium text-brand-700 underline" href="/review/withdrawals">
            Withdrawals
          </Link>
          .
        </p>
      </div>
    </>
  );
}
