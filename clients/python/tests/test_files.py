"""files.upload of every kind, from a path, bytes and a file object; the links work in a task."""

from __future__ import annotations

import io
from pathlib import Path

from gengate import GenGate


def test_upload_each_kind_from_path_bytes_and_file(gg: GenGate, media: Path) -> None:
    photo = gg.files.upload(media / "photo.jpg")
    assert photo.kind == "image" and photo.file_name == "photo.jpg" and photo.seconds == 0
    assert photo.url.startswith(gg.base_url + "/files/") and photo.expires_in_days == 1
    clip = gg.files.upload((media / "clip.mp4").read_bytes(), filename="clip.mp4")
    assert clip.kind == "video" and clip.seconds == 3 and 2.5 < clip.duration < 3.5
    with open(media / "clip.mov", "rb") as f:
        mov = gg.files.upload(f)
    assert mov.kind == "video" and mov.file_name == "clip.mp4"  # converted to MP4
    song = gg.files.upload(io.BytesIO((media / "song.mp3").read_bytes()), filename="song.mp3")
    assert song.kind == "audio" and song.seconds == 3
    unnamed = gg.files.upload((media / "photo.jpg").read_bytes())
    assert unnamed.file_name == "upload.jpg"


def test_uploads_feed_a_video_task(gg: GenGate, media: Path) -> None:
    photo = gg.files.upload(str(media / "photo.jpg"))
    clip = gg.files.upload(media / "clip.mp4")
    song = gg.files.upload(media / "song.mp3")
    result = gg.run(
        "seedance-2.5",
        {"prompt": "the fox runs", "resolution": "480p", "duration": 4, "image_urls": [photo.url], "video_urls": [clip.url], "audio_urls": [song.url]},
    )
    assert result.urls and result.urls[0].endswith(".mp4")
    expected = gg.prices.calculate("seedance-2.5", resolution="480p", duration=4, reference_images=1, reference_video_seconds=3).price_usd
    assert result.cost_usd == expected
