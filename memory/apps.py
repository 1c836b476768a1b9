from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        # The vector backends never import the rows they index: the indexing layer tells them
        # where a copy that starts empty over a filled store reads its vectors from.
        from memory import indexing, vectors

        vectors.seeder_install(indexing.vector_seed_rows)
