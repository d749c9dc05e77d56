"use client";

import { useEffect, useRef, useState } from "react";
import type { AnnotationRecord } from "@/lib/catalog/list-annotations";
import type { PreviewStream } from "@/lib/previews/create-preview";
import type { EpisodeStream } from "@/lib/previews/episode-streams";
import { Alert } from "../../ui/alert";
import { formatBytes } from "../../ui/format";
import type { PlaybackEngine } from "../player/engine";
import { readEpisodeTable, TableError, type EpisodeData } from "./episode-table";
import { FeaturePlot } from "./feature-plot";

type Loaded = { state: "loading" } | { state: "ready"; data: EpisodeData } | { state: "failed"; reason: string };

/**
 * The robot's data of the episode, plotted under the video in step with it: every numeric feature
 * of each table stream (LeRobot's `data`) gets a plot. Nothing is fetched before the preview is:
 * the tables come with it, under the same disclosure, through its signed URLs. A table that is
 * missing, unreadable or not parquet is named here while the video plays on.
 */
export function EpisodePlots({
  tables,
  signed,
  spans,
  engine,
  length,
}: {
  tables: EpisodeStream[];
  /** The preview's streams, once it has been disclosed and signed; null before. */
  signed: PreviewStream[] | null;
  spans: readonly AnnotationRecord[];
  engine: PlaybackEngine;
  length: number;
}) {
  if (!tables.length) return null;
  return (
    <section className="mt-4 space-y-4" aria-label="The robot's data">
      {tables.map((table) => {
        const url = signed?.find((s) => s.stream === table.stream)?.url;
        return url ? (
          <TablePlots
            key={`${table.stream} ${url}`}
            table={table}
            url={url}
            spans={spans}
            engine={engine}
            length={length}
          />
        ) : (
          <p key={table.stream} className="text-sm text-slate-500" data-table-pending={table.stream}>
            <span className="font-mono">{table.stream}</span> ({formatBytes(table.size_bytes)}): the robot&apos;s data
            is plotted here in step with the video once you press play.
          </p>
        );
      })}
    </section>
  );
}

function TablePlots({
  table,
  url,
  spans,
  engine,
  length,
}: {
  table: EpisodeStream;
  url: string;
  spans: readonly AnnotationRecord[];
  engine: PlaybackEngine;
  length: number;
}) {
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  // Read once per URL: the length only spreads the rows of a table without timestamps, and a
  // change of the large stream (whose range may differ by a frame) is no reason to fetch again.
  const lengthWhenRead = useRef(length);
  useEffect(() => {
    let current = true;
    readEpisodeTable({
      url,
      size: table.size_bytes,
      episodeIndex: table.table?.episode_index ?? null,
      names: table.table?.names ?? {},
      duration: lengthWhenRead.current,
    }).then(
      (data) => current && setLoaded({ state: "ready", data }),
      (error: unknown) =>
        current &&
        setLoaded({
          state: "failed",
          reason: error instanceof TableError ? error.message : "it could not be read",
        }),
    );
    return () => {
      current = false;
    };
  }, [url, table]);

  if (loaded.state === "loading")
    return (
      <p className="text-sm text-slate-500" aria-live="polite" data-table-loading={table.stream}>
        Reading <span className="font-mono">{table.stream}</span>…
      </p>
    );
  if (loaded.state === "failed")
    return (
      <Alert kind="error" title={`Can't plot ${table.stream}`} className="wrap-anywhere">
        <span data-table-failed={table.stream}>
          The robot&apos;s data in <span className="font-mono">{table.stream}</span> could not be plotted:{" "}
          {loaded.reason}. The video plays on without it.
        </span>
      </Alert>
    );
  return (
    <div className="space-y-4" data-table={table.stream}>
      {loaded.data.features.map((feature) => (
        <FeaturePlot
          key={feature.key}
          feature={feature}
          time={loaded.data.time}
          spans={spans}
          engine={engine}
          length={length}
        />
      ))}
    </div>
  );
}
