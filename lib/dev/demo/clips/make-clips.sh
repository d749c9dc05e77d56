#!/bin/sh
# Makes the demo's video clips (committed beside this script; run again only to change them).
# Debian's ffmpeg 5.1 (libx264, libaom-av1, drawtext with DejaVu fonts): apt-get install ffmpeg fonts-dejavu-core
#
# Each clip is 80 s (longer than any demo episode, 8-78 s), 320x180 at 10 frames per second, a
# test pattern with a square sweeping across it and the clip's own time burnt in, so playback,
# seeking and two streams in step can be seen. Fragmented MP4 with a keyframe and a fragment every
# second (+frag_keyframe), no audio, H.264 or AV1 as LeRobot writes them: the demo cuts each episode's
# file to the episode's own length by keeping the first fragments (generate.ts, clipOfLength).
set -eu
cd "$(dirname "$0")"
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf
RATE=10
SECONDS_LONG=80
SIZE=320x180

SOURCE="size=$SIZE:rate=$RATE:duration=$SECONDS_LONG"

# clip NAME BACKGROUND SQUARE-COLOUR CODEC-ARGS...
clip() {
  name=$1 background=$2 colour=$3
  shift 3
  ffmpeg -hide_banner -loglevel error -y \
    -f lavfi -i "$background" \
    -f lavfi -i "color=c=$colour:size=20x20:rate=$RATE" \
    -filter_complex "[0][1]overlay=x='mod(t*40,300)':y=36:shortest=1,drawtext=fontfile=$FONT:text='$name  %{pts\:hms}':x=6:y=h-th-6:fontsize=16:fontcolor=white:box=1:boxcolor=black@0.7:boxborderw=3" \
    -pix_fmt yuv420p -g $RATE -movflags +frag_keyframe -an "$@" "$name.mp4"
}

H264="-c:v libx264 -preset veryslow -crf 36"
AV1="-c:v libaom-av1 -crf 48 -b:v 0 -cpu-used 6"

clip bars-h264 "smptebars=$SOURCE" yellow $H264
clip bars-av1 "smptehdbars=$SOURCE" white $AV1
clip rgb-h264 "rgbtestsrc=$SOURCE" black $H264
clip yuv-av1 "yuvtestsrc=$SOURCE" red $AV1
clip grid-h264 "color=c=0x334155:$SOURCE,drawgrid=w=40:h=40:color=0x94a3b8" yellow $H264
