"""The Window a read, a load and a command keep to: both ends inclusive, either open."""

from transports.window import Window


def test_both_ends_are_inside():
    window = Window(100, 200)
    assert [t in window for t in (99, 100, 150, 200, 201)] == [False, True, True, True, False]
    assert window.before_start(99) and not window.before_start(100)
    assert window.past_end(201) and not window.past_end(200)


def test_an_open_end_reaches_the_recordings_start_or_end():
    assert 0 in Window(until_us=200) and 10**18 in Window(since_us=100)
    assert not Window().bounded and all(t in Window() for t in (0, 10**18))
    assert Window(since_us=0).bounded and Window(until_us=0).bounded


def test_ending_before_leaves_out_the_moment_itself():
    window = Window.ending_before(1_000)
    assert 999 in window and 1_000 not in window and window.since_us is None
