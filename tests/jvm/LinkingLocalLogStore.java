package io.github.deltalifecycle.tests;

import java.io.BufferedWriter;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Paths;
import java.util.Iterator;
import java.util.UUID;

import io.delta.storage.LocalLogStore;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * delta-spark's LocalLogStore, with a put-if-absent that holds across processes.
 *
 * <p>On a local file system delta-spark checks that a commit file is absent and then renames its
 * temporary file over the name: atomic within one JVM (it holds a lock), not between processes. A
 * writer in another process (delta-rs, another Spark driver) that commits the same version between
 * the check and the rename loses its commit without an error. The Delta protocol asks the storage for
 * an atomic put-if-absent; this store gets it from a hard link, which fails when the name exists, as
 * delta-rs does on a local file system. Tests with writers in several processes run with it.
 */
public class LinkingLocalLogStore extends LocalLogStore {

  public LinkingLocalLogStore(Configuration hadoopConf) {
    super(hadoopConf);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
      throws IOException {
    if (overwrite) {
      super.write(path, actions, true, hadoopConf);
      return;
    }
    java.nio.file.Path target = Paths.get(path.toUri().getPath());
    java.nio.file.Path temp =
        target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
    try {
      try (BufferedWriter out = Files.newBufferedWriter(temp, StandardCharsets.UTF_8)) {
        while (actions.hasNext()) {
          out.write(actions.next());
          out.write('\n');
        }
      }
      // Throws java.nio.file.FileAlreadyExistsException, the LogStore contract's "taken".
      Files.createLink(target, temp);
    } catch (NoSuchFileException e) {
      FileNotFoundException missing = new FileNotFoundException(e.getMessage());
      missing.initCause(e);
      throw missing;
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
